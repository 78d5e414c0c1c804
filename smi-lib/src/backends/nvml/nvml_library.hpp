// NVML loaded at run time: dlopen of libnvidia-ml.so.1 (or $HIPSTACK_NVML_LIBRARY), every entry
// point of HIPSTACK_NVML_SYMBOLS resolved newest name first, and NVML's return codes mapped to
// reading statuses.
#pragma once

#include <memory>
#include <string>
#include <type_traits>

#include "../../readings.hpp"
#include "nvml_api.hpp"

namespace hipstack::smi::detail::nvml {

struct Api {
#define HIPSTACK_NVML_MEMBER(member, signature, ...) std::add_pointer_t<signature> member = nullptr;
  HIPSTACK_NVML_SYMBOLS(HIPSTACK_NVML_MEMBER)
#undef HIPSTACK_NVML_MEMBER
};

class Library {
 public:
  // Loads and initialises NVML; on failure `reason` says why and api() must not be used.
  // shutdown: call nvmlShutdown in the destructor (false for a process about to exit).
  explicit Library(const std::string& path, bool shutdown = true);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  [[nodiscard]] bool ready() const noexcept { return ready_; }
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }
  [[nodiscard]] const Api& api() const noexcept { return api_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  // "NVML_ERROR_NOT_SUPPORTED (Not Supported)"-style text for a return code.
  [[nodiscard]] std::string describe(Return code) const;

 private:
  void* handle_ = nullptr;
  bool initialised_ = false;
  bool shutdown_ = true;
  bool ready_ = false;
  std::string path_;
  std::string reason_;
  Api api_;
};

// errno equivalent of an NVML return code, so ReadingList::failed assigns the status:
// NOT_SUPPORTED / FUNCTION_NOT_FOUND -> not_supported; NO_PERMISSION, TIMEOUT, IN_USE, NOT_READY,
// NO_DATA -> unavailable; GPU_IS_LOST, RESET_REQUIRED and the rest -> error.
int errno_for(Return code) noexcept;

}  // namespace hipstack::smi::detail::nvml
