// What the C API's files share (c_api.cpp: the calls; c_api_lists.cpp: the lists): error handling,
// the size-prefixed struct rules and the list object.
#pragma once

#include "c_api_deadline.hpp"

#include <hipstack/events.hpp>
#include <hipstack/smi.h>
#include <hipstack/smi.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <variant>
#include <vector>

// A list and what it holds: the C++ values the C structs point into (immutable once made). Lists of
// partitions, processes and links hold one nested readings list per item.
struct hipstack_smi_list {
  using Items = std::variant<std::vector<hipstack::smi::DeviceSummary>, std::vector<hipstack::smi::BackendStatus>,
                             std::vector<hipstack::smi::Reading>, std::vector<hipstack::smi::Partition>,
                             std::vector<hipstack::smi::ProcessInfo>, std::vector<hipstack::smi::Link>,
                             std::vector<hipstack::smi::BadPage>, std::vector<hipstack::smi::HealthFinding>,
                             std::vector<hipstack::smi::Event>, hipstack::smi::ControlResult>;
  hipstack_smi_list_kind kind;
  Items items;
  bool nested = false;
  std::vector<std::unique_ptr<hipstack_smi_list>> readings;  // one per item, for the kinds that have them
};

namespace hipstack::smi::c_api {

// Sets the calling thread's last error and returns `result`.
hipstack_smi_result fail(hipstack_smi_result result, std::string message);
void clear_error();

// Runs fn, mapping every exception to a result code and the thread's error message.
template <typename Fn>
hipstack_smi_result guarded(Fn&& fn) noexcept {
  try {
    clear_error();
    return fn();
  } catch (const Error& e) {
    switch (e.code()) {
      case Error::Code::no_such_device: return fail(HIPSTACK_SMI_ERROR_NO_SUCH_DEVICE, e.what());
      case Error::Code::invalid_argument: return fail(HIPSTACK_SMI_ERROR_INVALID_ARGUMENT, e.what());
      case Error::Code::read_failure: return fail(HIPSTACK_SMI_ERROR_READ_FAILURE, e.what());
    }
    return fail(HIPSTACK_SMI_ERROR_INTERNAL, e.what());
  } catch (const TimedOut& e) {
    return fail(HIPSTACK_SMI_ERROR_TIMED_OUT, e.what());
  } catch (const std::bad_alloc&) {
    return fail(HIPSTACK_SMI_ERROR_NO_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(HIPSTACK_SMI_ERROR_INTERNAL, e.what());
  }
}

// The size of a struct's first version: the least struct_size a caller may pass. Every struct is at
// its first version; when one grows, specialise this with the offset of its first new field.
template <typename T>
inline constexpr std::size_t first_version_size = sizeof(T);
template <>
inline constexpr std::size_t first_version_size<hipstack_smi_open_options> = offsetof(hipstack_smi_open_options, read_deadline_ms);

template <typename T>
hipstack_smi_result check_size(const T* s, const char* what) {
  if (s == nullptr) return fail(HIPSTACK_SMI_ERROR_INVALID_ARGUMENT, fmt::format("{} must not be NULL", what));
  if (s->struct_size < first_version_size<T>) {
    return fail(HIPSTACK_SMI_ERROR_INVALID_ARGUMENT,
                fmt::format("{}: struct_size {} is smaller than the struct's first version ({} bytes): set it to sizeof",
                            what, s->struct_size, first_version_size<T>));
  }
  return HIPSTACK_SMI_OK;
}

// Copies the fields of `filled` that fit in the caller's out->struct_size (an older caller's struct
// is shorter); out->struct_size is kept.
template <typename T>
hipstack_smi_result copy_out(const T& filled, T* out, const char* what) {
  if (const auto r = check_size(out, what); r != HIPSTACK_SMI_OK) return r;
  const std::uint32_t size = out->struct_size;
  std::memcpy(out, &filled, std::min<std::size_t>(size, sizeof(T)));
  out->struct_size = size;
  return HIPSTACK_SMI_OK;
}

// Reads the fields of a caller's input struct over `defaults`: those past its struct_size (a field
// an older caller does not know) keep their default.
template <typename T>
hipstack_smi_result copy_in(const T* in, T& defaults, const char* what) {
  if (const auto r = check_size(in, what); r != HIPSTACK_SMI_OK) return r;
  std::memcpy(&defaults, in, std::min<std::size_t>(in->struct_size, sizeof(T)));
  defaults.struct_size = sizeof(T);
  return HIPSTACK_SMI_OK;
}

// Lists: made from C++ values (items with readings get nested lists) and handed to the caller.
template <typename T>
std::unique_ptr<hipstack_smi_list> make_list(hipstack_smi_list_kind kind, std::vector<T> items);
std::unique_ptr<hipstack_smi_list> make_control_list(ControlResult result);

hipstack_smi_reading c_reading(const Reading& r);

}  // namespace hipstack::smi::c_api
