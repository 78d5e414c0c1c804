// What job accounting takes from outside the daemon: job ids and users in requests, and the
// job-mapping folder a batch system's prolog writes (docs/jobs.md). Each is checked here, and a bad
// one refused naming what and where.
#pragma once

#include <hipstack/smi.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace hipstack::smid {

// A request the accounting refuses, and why; grpc_jobs.cpp maps `kind` to a status code.
class JobRequestError : public std::runtime_error {
 public:
  enum class Kind { invalid, not_found, exists, unavailable, exhausted };
  JobRequestError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  [[nodiscard]] Kind kind() const noexcept { return kind_; }

 private:
  Kind kind_;
};

inline constexpr std::size_t kMaxJobIdBytes = 128;
inline constexpr std::size_t kMaxJobUserBytes = 64;

// Job ids and users are letters, digits and ._-+:@ (Slurm's 4711, 4711_3, 4711+1), at most
// kMaxJobIdBytes and kMaxJobUserBytes (a user may be empty); throws JobRequestError(invalid)
// naming what is wrong.
void check_job_id(const std::string& id);
void check_job_user(const std::string& user);

// Running jobs by GPU key (UUID, else BDF: gpu_key()), started ones and the mapping folder's.
using GpuJobs = std::map<std::string, std::set<std::string>>;
std::string gpu_key(const smi::DeviceSummary& device);

// The job-mapping folder (dcgm-exporter's --hpc-job-mapping-dir): a file per GPU, named by the
// GPU's index, with its job ids one per line. Bounded: files over 64 KiB, names that are not an
// index, links and non-regular files are skipped; an id that check_job_id refuses is skipped;
// at most 4096 entries are listed and 256 jobs taken per GPU. `devices` maps an index to its GPU
// key. Returns the jobs by GPU key; `problems` says what was skipped, at most a line per file plus
// two (the names that are not an index, counted; entries past the cap), so its size does not grow
// with the junk.
GpuJobs read_job_mapping(const std::string& dir, const std::map<std::uint32_t, std::string>& devices,
                         std::vector<std::string>& problems);

}  // namespace hipstack::smid
