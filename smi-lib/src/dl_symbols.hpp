// dl_symbols.hpp: binding a function pointer to the first of several symbol names a dlopen'ed vendor
// library exports (NVML, the CUDA driver and the HIP runtime renamed calls across versions).
#pragma once

#include <dlfcn.h>

#include <initializer_list>

namespace hipstack::smi::detail {

template <typename Fn>
bool resolve_symbol(void* handle, Fn*& slot, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* symbol = ::dlsym(handle, name)) {
      slot = reinterpret_cast<Fn*>(symbol);
      return true;
    }
  }
  return false;
}

}  // namespace hipstack::smi::detail
