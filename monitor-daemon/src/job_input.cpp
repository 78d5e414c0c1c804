// What job accounting takes from outside the daemon (job ids, labels, stored usage), checked
// (job_input.hpp).
#include "job_input.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <cctype>
#include <charconv>
#include <cerrno>
#include <cstring>
#include <optional>

namespace hipstack::smid {
namespace {

// What is wrong with an id or user, or nothing: no exception, so a file of junk lines costs no
// more than a file of good ones.
std::optional<std::string> text_problem(const std::string& text, const char* what, std::size_t max_bytes, bool may_be_empty) {
  if (text.empty()) return may_be_empty ? std::nullopt : std::optional<std::string>(fmt::format("{}: empty", what));
  if (text.size() > max_bytes) return fmt::format("{}: {} bytes, more than {}", what, text.size(), max_bytes);
  // A leading '-' reads as an option to the commands that take ids (`job stop -rf`, scripts).
  if (text.front() == '-') return fmt::format("{}: begins with '-'", what);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const bool allowed = std::isalnum(c) != 0 || c == '.' || c == '_' || c == '-' || c == '+' || c == ':' || c == '@';
    if (!allowed) return fmt::format("{}: byte {} (0x{:02x}) is not a letter, digit or one of ._-+:@", what, i, c);
  }
  return std::nullopt;
}

void check_text(const std::string& text, const char* what, std::size_t max_bytes, bool may_be_empty) {
  if (auto problem = text_problem(text, what, max_bytes, may_be_empty)) throw JobRequestError(JobRequestError::Kind::invalid, *problem);
}

constexpr std::size_t kMaxMappingFileBytes = 64 * 1024;
constexpr std::size_t kMaxJobsPerGpu = 256;
// A look reads at most one file per GPU (of at most kMaxMappingFileBytes) and lists at most this
// many entries; what it skips is said once per file or kind, with a count, never once per line:
// a folder of junk costs a look no more than a folder of good files.
constexpr std::size_t kMaxMappingEntries = 4096;
constexpr std::size_t kNamedForeign = 4;

// True when `name` is the index of one of `devices` written as std::to_string writes it.
bool names_a_gpu(std::string_view name, const std::map<std::uint32_t, std::string>& devices) {
  std::uint32_t index = 0;
  const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), index);
  return error == std::errc() && end == name.data() + name.size() && std::to_string(index) == name && devices.contains(index);
}

// The job ids of one GPU's mapping file (`where`: its path, for the problems): one a line, blanks
// around them ignored; a bad line skipped (the first named, the others counted), at most
// kMaxJobsPerGpu.
void add_job_lines(const std::string& text, const std::string& where, std::set<std::string>& jobs,
                   std::vector<std::string>& problems) {
  std::size_t line_number = 0, refused = 0;
  std::string first_refused;  // the first bad line, named; the others counted
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    line.erase(0, std::min(line.find_first_not_of(" \t"), line.size()));
    if (line.empty()) continue;
    if (const auto problem = text_problem(line, "job id", kMaxJobIdBytes, false)) {
      if (refused++ == 0) first_refused = fmt::format("{}:{}: {}: skipped", where, line_number, *problem);
      continue;
    }
    if (jobs.size() >= kMaxJobsPerGpu) {
      problems.push_back(fmt::format("{}: more than {} jobs: the rest skipped", where, kMaxJobsPerGpu));
      break;
    }
    jobs.insert(std::move(line));
  }
  if (refused > 1) first_refused += fmt::format(" (and {} more bad lines)", refused - 1);
  if (refused > 0) problems.push_back(std::move(first_refused));
}

// The folder's other names, said (a typo, a GPU this node does not have): counted, the first few in
// name order named, the listing itself bounded.
void note_other_names(DIR* listing, const std::string& dir, const std::map<std::uint32_t, std::string>& devices,
                      std::vector<std::string>& problems) {
  std::size_t foreign = 0, entries = 0;
  std::set<std::string> foreign_names;
  while (const dirent* entry = ::readdir(listing)) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (++entries > kMaxMappingEntries) {
      problems.push_back(fmt::format("{}: more than {} entries: the rest not looked at", dir, kMaxMappingEntries));
      break;
    }
    if (names_a_gpu(name, devices)) continue;
    ++foreign;
    foreign_names.insert(smi::printable_text(name.substr(0, 64)));
    if (foreign_names.size() > kNamedForeign) foreign_names.erase(std::prev(foreign_names.end()));
  }
  if (foreign > 0) {
    std::string named;
    for (const std::string& n : foreign_names) named += (named.empty() ? "" : ", ") + n;
    problems.push_back(fmt::format("{}: {} {} not the index of a GPU here ({}{}): skipped", dir, foreign, foreign == 1 ? "name is" : "names are",
                                   named, foreign > foreign_names.size() ? ", ..." : ""));
  }
}

}  // namespace

std::string gpu_key(const smi::DeviceSummary& device) { return device.uuid.empty() ? device.bdf : device.uuid; }

void check_job_id(const std::string& id) { check_text(id, "job id", kMaxJobIdBytes, false); }
void check_job_user(const std::string& user) { check_text(user, "user", kMaxJobUserBytes, true); }

GpuJobs read_job_mapping(const std::string& dir, const std::map<std::uint32_t, std::string>& devices,
                         std::vector<std::string>& problems) {
  GpuJobs out;
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {
    problems.push_back(fmt::format("{}: cannot open the folder: {}", dir, std::strerror(errno)));
    return out;
  }
  DIR* listing = ::fdopendir(dir_fd);
  if (listing == nullptr) {
    ::close(dir_fd);
    problems.push_back(fmt::format("{}: cannot list the folder: {}", dir, std::strerror(errno)));
    return out;
  }
  // Each GPU's file is opened by its name, so junk beside it costs the listing below, not the look.
  for (const auto& [index, key] : devices) {
    const std::string name = std::to_string(index);
    // O_NONBLOCK: a FIFO put there does not hang the read; O_NOFOLLOW: a link is not followed.
    const int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) continue;
    struct stat info {};
    if (fd < 0 || ::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) ||
        static_cast<std::size_t>(info.st_size) > kMaxMappingFileBytes) {
      problems.push_back(fmt::format("{}/{}: not a regular file of at most {} bytes: skipped", dir, name, kMaxMappingFileBytes));
      if (fd >= 0) ::close(fd);
      continue;
    }
    std::string text(kMaxMappingFileBytes + 1, '\0');
    std::size_t size = 0;
    for (ssize_t n; size < text.size() && (n = ::read(fd, text.data() + size, text.size() - size)) > 0;) size += static_cast<std::size_t>(n);
    ::close(fd);
    text.resize(std::min(size, kMaxMappingFileBytes));
    std::set<std::string>& jobs = out[key];
    add_job_lines(text, fmt::format("{}/{}", dir, name), jobs, problems);
    if (jobs.empty()) out.erase(key);
  }
  note_other_names(listing, dir, devices, problems);
  ::closedir(listing);
  return out;
}

}  // namespace hipstack::smid
