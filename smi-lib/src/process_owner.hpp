// Name, owner and cgroup of a process, read through the FsView's /proc (shared by every backend).
#pragma once

#include <cstdint>
#include <string>

#include <hipstack/smi.hpp>

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
// The deepest cgroup path /proc/<pid>/cgroup names: cgroup v2's unified path, or on v1 (and hybrid)
// the longest controller path, which is where container runtimes put a container. "" when
// unreadable. At most kCgroupFileLimit bytes of the file are read.
inline constexpr std::size_t kCgroupFileLimit = 16 * 1024;
std::string process_cgroup(const FsView& fs, std::int32_t pid);
// Fills info's name, user, command_line and cgroup for info.pid.
void describe_process(const FsView& fs, ProcessInfo& info);

}  // namespace hipstack::smi::detail
