// dl_symbols.hpp: binding a function pointer to the first of several symbol names a dlopen'ed vendor
// library exports (NVML, the CUDA driver and the HIP runtime renamed calls across versions).
#pragma once

#include <dlfcn.h>

#include <initializer_list>
#include <string>

namespace hipstack::smi::detail {

// The text of the last failed dlopen or dlsym, with glibc's copy of it freed. glibc (2.34 and later)
// keeps a failure in a buffer that only a thread-local pointer holds until dlerror is called again
// after returning it; left there, LeakSanitizer reported it at exit in some runs.
inline std::string take_dl_error() {
  const char* error = ::dlerror();
  std::string text = error != nullptr ? error : "";
  ::dlerror();  // the text was returned: this call frees it
  return text;
}

template <typename Fn>
bool resolve_symbol(void* handle, Fn*& slot, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* symbol = ::dlsym(handle, name)) {
      slot = reinterpret_cast<Fn*>(symbol);
      return true;
    }
    take_dl_error();  // an older or newer library without this name: nothing to keep
  }
  return false;
}

}  // namespace hipstack::smi::detail
