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

}  // namespace hipstack::smi::detail
