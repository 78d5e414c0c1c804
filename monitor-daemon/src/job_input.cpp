#include "job_input.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace hipstack::smid {
namespace {

void check_text(const std::string& text, const char* what, std::size_t max_bytes, bool may_be_empty) {
  if (text.empty() && !may_be_empty) throw JobRequestError(JobRequestError::Kind::invalid, fmt::format("{}: empty", what));
  if (text.size() > max_bytes) {
    throw JobRequestError(JobRequestError::Kind::invalid, fmt::format("{}: {} bytes, more than {}", what, text.size(), max_bytes));
  }
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const bool allowed = std::isalnum(c) != 0 || c == '.' || c == '_' || c == '-' || c == '+' || c == ':' || c == '@';
    if (!allowed) {
      throw JobRequestError(JobRequestError::Kind::invalid,
                            fmt::format("{}: byte {} (0x{:02x}) is not a letter, digit or one of ._-+:@", what, i, c));
    }
  }
}

constexpr std::size_t kMaxMappingFileBytes = 64 * 1024;
constexpr std::size_t kMaxJobsPerGpu = 256;

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
  while (const dirent* entry = ::readdir(listing)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    const bool is_index = !name.empty() && name.size() <= 5 && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
    const auto device = is_index ? devices.find(static_cast<std::uint32_t>(std::stoul(name))) : devices.end();
    if (device == devices.end()) {
      problems.push_back(fmt::format("{}/{}: not the index of a GPU here: skipped", dir, smi::printable_text(name)));
      continue;
    }
    // O_NONBLOCK: a FIFO put there does not hang the read; O_NOFOLLOW: a link is not followed.
    const int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
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
    std::set<std::string>& jobs = out[device->second];
    std::size_t line_number = 0;
    for (std::size_t pos = 0; pos < text.size();) {
      std::size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      std::string line = text.substr(pos, end - pos);
      pos = end + 1;
      ++line_number;
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
      line.erase(0, std::min(line.find_first_not_of(" \t"), line.size()));
      if (line.empty()) continue;
      try {
        check_job_id(line);
      } catch (const JobRequestError& e) {
        problems.push_back(fmt::format("{}/{}:{}: {}: skipped", dir, name, line_number, e.what()));
        continue;
      }
      if (jobs.size() >= kMaxJobsPerGpu) {
        problems.push_back(fmt::format("{}/{}: more than {} jobs: the rest skipped", dir, name, kMaxJobsPerGpu));
        break;
      }
      jobs.insert(std::move(line));
    }
    if (jobs.empty()) out.erase(device->second);
  }
  ::closedir(listing);
  return out;
}

}  // namespace hipstack::smid
