// Name and owner of a process, read through the FsView's /proc (shared by every backend).
#pragma once

#include <cstdint>
#include <string>

#include "fs_view.hpp"

namespace hipstack::smi::detail {

// /proc/<pid>/comm, "" when unreadable.
std::string process_name(const FsView& fs, std::int32_t pid);
// /proc/<pid>/cmdline with its arguments joined by spaces, at most kCommandLineLimit bytes of it
// ("" when unreadable, or for a kernel thread).
inline constexpr std::size_t kCommandLineLimit = 4096;
std::string process_command_line(const FsView& fs, std::int32_t pid);
// The user of /proc/<pid>/status's real Uid: a name for the live /proc, the number for a capture's
// (its uids are another machine's), "" when unreadable.
std::string process_user(const FsView& fs, std::int32_t pid);

}  // namespace hipstack::smi::detail
