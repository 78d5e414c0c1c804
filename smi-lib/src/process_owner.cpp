// Name, owner and cgroup of a process, read through the FsView's /proc (process_owner.hpp).
#include "process_owner.hpp"

#include <fmt/format.h>
#include <pwd.h>

#include <algorithm>

#include "parse.hpp"

namespace hipstack::smi::detail {

std::string process_name(const FsView& fs, std::int32_t pid) {
  const FileText comm = fs.read_text(fmt::format("/proc/{}/comm", pid));
  return comm.ok() ? comm.text : std::string();
}

std::string process_command_line(const FsView& fs, std::int32_t pid) {
  const FileBytes cmdline = fs.read_bytes(fmt::format("/proc/{}/cmdline", pid), kCommandLineLimit);
  if (!cmdline.ok()) return {};
  std::string text(cmdline.bytes.begin(), cmdline.bytes.end());
  while (!text.empty() && text.back() == '\0') text.pop_back();
  std::replace(text.begin(), text.end(), '\0', ' ');
  return text;
}

std::string process_user(const FsView& fs, std::int32_t pid) {
  const FileText status = fs.read_text(fmt::format("/proc/{}/status", pid));
  if (!status.ok()) return {};
  const KeyValues fields = parse_key_values(status.text, ':');
  const auto uid_line = find_value(fields, "Uid");
  if (!uid_line) return {};
  const auto ids = split_fields(*uid_line, '\t');
  const auto uid = ids.empty() ? std::nullopt : parse_uint(split_fields(ids[0], ' ').front());
  if (!uid) return {};
  if (fs.host_path("/proc") != "/proc") return std::to_string(*uid);
  passwd entry{};
  passwd* found = nullptr;
  char buffer[1024];
  if (::getpwuid_r(static_cast<uid_t>(*uid), &entry, buffer, sizeof buffer, &found) == 0 && found != nullptr) {
    return entry.pw_name;
  }
  return std::to_string(*uid);
}

std::string process_cgroup(const FsView& fs, std::int32_t pid) {
  const FileBytes file = fs.read_bytes(fmt::format("/proc/{}/cgroup", pid), kCgroupFileLimit);
  if (!file.ok()) return {};
  // Lines are "hierarchy-ID:controller-list:path"; the path is everything after the second colon.
  std::string deepest;
  std::string_view rest(reinterpret_cast<const char*>(file.bytes.data()), file.bytes.size());
  while (!rest.empty()) {
    const auto end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    const auto first = line.find(':');
    const auto second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    const std::string_view path = line.substr(second + 1);
    if (!path.starts_with('/') || path.size() <= deepest.size()) continue;
    deepest = std::string(path);
  }
  return deepest;
}

void describe_process(const FsView& fs, ProcessInfo& info) {
  info.name = process_name(fs, info.pid);
  info.user = process_user(fs, info.pid);
  info.command_line = process_command_line(fs, info.pid);
  info.cgroup = process_cgroup(fs, info.pid);
}

}  // namespace hipstack::smi::detail
