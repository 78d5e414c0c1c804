// NVML loaded at run time (dlopen), every symbol resolved once (nvml_library.hpp).
#include "nvml_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cerrno>
#include <initializer_list>

#include "../../dl_symbols.hpp"

namespace hipstack::smi::detail::nvml {

Library::Library(const std::string& path, bool shutdown) : shutdown_(shutdown), path_(path) {
  // Lazy binding: NVML is large and most of it is never called; nvidia-smi binds it lazily too.
  // RTLD_NODELETE: NVML (and the libcuda it loads) is not made to be unloaded, and unmapping it
  // costs a cold process over a millisecond that exit does anyway.
  handle_ = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE);
  if (handle_ == nullptr) {
    const std::string error = take_dl_error();
    reason_ = fmt::format("cannot load {}: {}", path, !error.empty() ? error : "unknown error");
    return;
  }
#define HIPSTACK_NVML_RESOLVE(member, signature, ...) resolve_symbol(handle_, api_.member, {__VA_ARGS__});
  HIPSTACK_NVML_SYMBOLS(HIPSTACK_NVML_RESOLVE)
#undef HIPSTACK_NVML_RESOLVE
  // Without these there is no device to ask anything.
  const std::pair<const char*, bool> required[] = {{"nvmlInit", api_.init != nullptr},
                                                   {"nvmlShutdown", api_.shutdown != nullptr},
                                                   {"nvmlDeviceGetCount", api_.device_count != nullptr},
                                                   {"nvmlDeviceGetHandleByIndex", api_.device_by_index != nullptr}};
  for (const auto& [name, present] : required) {
    if (!present) {
      reason_ = fmt::format("{} lacks {} (and its versioned names)", path, name);
      return;
    }
  }
  const Return init = api_.init();
  if (init != kSuccess) {
    reason_ = fmt::format("nvmlInit failed: {}", describe(init));
    return;
  }
  initialised_ = true;
  ready_ = true;
}

Library::~Library() {
  if (initialised_ && shutdown_) api_.shutdown();
  if (handle_ != nullptr) ::dlclose(handle_);
}

std::string Library::describe(Return code) const {
  const char* text = api_.error_string != nullptr ? api_.error_string(code) : nullptr;
  return fmt::format("NVML error {} ({})", code, text != nullptr ? text : "no description");
}

int errno_for(Return code) noexcept {
  switch (code) {
    case kSuccess: return 0;
    case kErrorNotSupported:
    case kErrorFunctionNotFound:
    case kErrorNotFound:
      return ENOENT;
    case kErrorNoPermission: return EACCES;
    case kErrorTimeout: return ETIMEDOUT;
    case kErrorInUse: return EBUSY;
    case kErrorNotReady: return EAGAIN;
    case kErrorNoData: return ENODATA;
    case kErrorGpuIsLost: return ENXIO;
    case kErrorResetRequired: return EIO;
    case kErrorInsufficientSize: return EOVERFLOW;
    case kErrorInvalidArgument: return EINVAL;
    default: return EIO;
  }
}

}  // namespace hipstack::smi::detail::nvml
