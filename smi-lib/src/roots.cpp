// The roots an OpenOptions names, resolved by one rule for System::open and hipstack-info alike
// (roots.hpp).
#include "roots.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdlib>
#include <utility>

namespace hipstack::smi::detail {
namespace {

std::string from_env(const std::string& given, const char* variable) {
  if (!given.empty()) return given;
  const char* value = std::getenv(variable);
  return value != nullptr ? std::string(value) : std::string();
}

std::string sibling_root(const std::string& sys_root, const char* name) {
  std::string parent = sys_root;
  while (parent.size() > 1 && parent.back() == '/') parent.pop_back();
  const auto slash = parent.rfind('/');
  parent = slash == std::string::npos ? "." : parent.substr(0, slash == 0 ? 1 : slash);
  return parent + "/" + name;
}

}  // namespace

Roots resolve_roots(const OpenOptions& options) {
  Roots roots;
  roots.sys = from_env(options.sysfs_root, "HIPSTACK_SYSFS_ROOT");
  roots.proc = from_env(options.procfs_root, "HIPSTACK_PROCFS_ROOT");
  roots.dev = options.devfs_root;
  roots.capture = !roots.sys.empty();
  roots.dev_given = !roots.dev.empty();
  for (const auto& [root, what] : {std::pair{&roots.sys, "sysfs"}, {&roots.proc, "procfs"}, {&roots.dev, "devfs"}}) {
    struct stat st {};
    if (!root->empty() && (::stat(root->c_str(), &st) != 0 || !S_ISDIR(st.st_mode))) {
      throw Error(Error::Code::invalid_argument, fmt::format("{} root {} is not a directory", what, *root));
    }
  }
  if (roots.capture && roots.proc.empty()) roots.proc = sibling_root(roots.sys, "proc");
  if (roots.capture && roots.dev.empty()) roots.dev = sibling_root(roots.sys, "dev");
  return roots;
}

std::string nvml_library_path(const OpenOptions& options) {
  const std::string path = from_env(options.nvml_library, "HIPSTACK_NVML_LIBRARY");
  return path.empty() ? "libnvidia-ml.so.1" : path;
}

}  // namespace hipstack::smi::detail
