#include "job_accounting.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "thread_name.hpp"

namespace hipstack::smid {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string usage_key(const JobGpuUsage& gpu) { return gpu.uuid.empty() ? gpu.bdf : gpu.uuid; }

// The view of the GPU a job's usage belongs to, in `views`; null when the daemon no longer samples it.
const Sampler::View* view_of(const std::vector<Sampler::View>& views, const std::string& key, std::size_t& position) {
  for (position = 0; position < views.size(); ++position) {
    if (views[position].snapshot && gpu_key(views[position].snapshot->device) == key) return &views[position];
  }
  return nullptr;
}

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

void JobAccounting::check_id(const std::string& id) { check_text(id, "job id", kMaxIdBytes, false); }
void JobAccounting::check_user(const std::string& user) { check_text(user, "user", kMaxUserBytes, true); }

JobAccounting::JobAccounting(JobAccountingOptions options, SamplerSource source)
    : options_(std::move(options)), source_(std::move(source)) {
  try {
    store_ = std::make_unique<JobStore>(options_.db_path);
    for (JobRecord& job : store_->running()) {
      for (const std::string& problem : job.problems) std::fprintf(stderr, "hipstack-smid: %s\n", problem.c_str());
      std::string id = job.id;
      running_.emplace(std::move(id), std::move(job));
    }
    if (!running_.empty()) std::fprintf(stderr, "hipstack-smid: job accounting resumed %zu running job(s)\n", running_.size());
  } catch (const std::exception& e) {
    store_.reset();
    store_error_ = e.what();
    std::fprintf(stderr, "hipstack-smid: job accounting is unavailable: %s\n", store_error_.c_str());
  }
  publish_gpu_jobs();
  thread_ = std::thread([this] { run(); });
}

JobAccounting::~JobAccounting() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

JobStore& JobAccounting::store() {
  if (!store_) throw JobRequestError(JobRequestError::Kind::unavailable, "job accounting is unavailable: " + store_error_);
  return *store_;
}

JobRecord JobAccounting::start(const std::string& id, const std::vector<std::uint32_t>& devices, const std::string& user,
                               const std::string& who) {
  check_id(id);
  check_user(user);
  const auto sampler = source_();
  const auto views = sampler->views();
  std::lock_guard lock(mutex_);
  JobStore& jobs = store();
  if (running_.contains(id)) throw JobRequestError(JobRequestError::Kind::exists, fmt::format("job {} is running", id));
  if (running_.size() >= kMaxRunning) {
    throw JobRequestError(JobRequestError::Kind::exhausted, fmt::format("{} jobs are running: stop one first", running_.size()));
  }
  JobRecord job;
  job.id = id;
  job.user = user;
  job.started_by = who;
  job.started_ns = now_ns();
  for (std::size_t position = 0; position < views.size(); ++position) {
    const auto& snapshot = views[position].snapshot;
    if (!snapshot) continue;
    if (!devices.empty() && std::find(devices.begin(), devices.end(), snapshot->device.index) == devices.end()) continue;
    const auto history = sampler->history(position);
    JobGpuUsage gpu;
    gpu.begin(*snapshot, history.empty() ? nullptr : history.back().get());
    job.gpus.push_back(std::move(gpu));
  }
  if (job.gpus.empty()) throw JobRequestError(JobRequestError::Kind::invalid, "no GPU to account: the daemon samples none");
  if (!jobs.insert(job)) {
    const auto stored = jobs.get(id);
    throw JobRequestError(JobRequestError::Kind::exists,
                          fmt::format("job {} was accounted already (started {} ns after the epoch): an id is accounted once",
                                      id, stored ? stored->started_ns : 0));
  }
  auto& running = running_.emplace(id, std::move(job)).first->second;
  publish_gpu_jobs();
  return running;
}

JobRecord JobAccounting::stop(const std::string& id, const std::string& who, bool& already) {
  check_id(id);
  const auto sampler = source_();
  std::lock_guard lock(mutex_);
  JobStore& jobs = store();
  const auto found = running_.find(id);
  if (found == running_.end()) {
    auto stored = jobs.get(id);
    if (!stored) throw JobRequestError(JobRequestError::Kind::not_found, fmt::format("no job {}", id));
    already = true;
    return std::move(*stored);
  }
  JobRecord job = found->second;
  count_samples(job, *sampler);
  const auto views = sampler->views();
  for (JobGpuUsage& gpu : job.gpus) {
    std::size_t position = 0;
    if (const Sampler::View* view = view_of(views, usage_key(gpu), position)) {
      gpu.finish(view->snapshot->health());
    } else {
      gpu.health_end = "UNKNOWN";
      gpu.health_end_summary = "the daemon no longer samples this GPU";
    }
  }
  job.stopped_ns = now_ns();
  job.stopped_by = who;
  jobs.finish(job);  // throws before anything changes here when the store fails
  running_.erase(found);
  publish_gpu_jobs();
  already = false;
  return job;
}

JobRecord JobAccounting::get(const std::string& id) {
  check_id(id);
  std::lock_guard lock(mutex_);
  if (const auto found = running_.find(id); found != running_.end()) return found->second;
  auto stored = store().get(id);
  if (!stored) throw JobRequestError(JobRequestError::Kind::not_found, fmt::format("no job {}", id));
  return std::move(*stored);
}

std::vector<JobRecord> JobAccounting::list(std::int64_t since_ns, std::size_t limit, bool& truncated) {
  std::lock_guard lock(mutex_);
  auto jobs = store().list(since_ns, limit + 1);
  truncated = jobs.size() > limit;
  if (truncated) jobs.resize(limit);
  // A running job's stored usage is at most one poll old; the one here is current.
  for (JobRecord& job : jobs) {
    if (const auto found = running_.find(job.id); found != running_.end()) job = found->second;
  }
  return jobs;
}

std::shared_ptr<const GpuJobs> JobAccounting::gpu_jobs() const {
  std::lock_guard lock(mutex_);
  return gpu_jobs_;
}

void JobAccounting::publish_gpu_jobs() {
  auto jobs = std::make_shared<GpuJobs>(mapped_);
  for (const auto& [id, job] : running_) {
    for (const JobGpuUsage& gpu : job.gpus) (*jobs)[usage_key(gpu)].insert(id);
  }
  gpu_jobs_ = std::move(jobs);
}

bool JobAccounting::count_samples(JobRecord& job, const Sampler& sampler) {
  const auto views = sampler.views();
  bool changed = false;
  for (JobGpuUsage& gpu : job.gpus) {
    std::size_t position = 0;
    if (view_of(views, usage_key(gpu), position) == nullptr) continue;
    for (const auto& entry : sampler.history(position)) changed = gpu.fold(*entry, options_.max_gap_s) || changed;
  }
  return changed;
}

void JobAccounting::run() {
  name_thread("smid-jobs");
  using Clock = std::chrono::steady_clock;
  auto next_prune = Clock::now();
  std::vector<std::string> reported;  // the mapping folder's problems already logged
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, options_.poll, [this] { return stopping_; });
    if (stopping_) break;
    const auto sampler = source_();
    count_and_save(*sampler);
    if (store_ && options_.retention.count() > 0 && Clock::now() >= next_prune) {
      next_prune = Clock::now() + std::chrono::hours(1);
      try {
        const std::int64_t before = now_ns() - std::chrono::duration_cast<std::chrono::nanoseconds>(options_.retention).count();
        if (const std::size_t pruned = store_->prune(before); pruned > 0) {
          std::fprintf(stderr, "hipstack-smid: deleted %zu job(s) stopped more than %lld h ago\n", pruned,
                       static_cast<long long>(options_.retention.count()));
        }
      } catch (const JobStoreError& e) {
        std::fprintf(stderr, "hipstack-smid: %s\n", e.what());
      }
    }
    if (!options_.mapping_dir.empty()) {
      std::map<std::uint32_t, std::string> devices;
      for (const Sampler::View& view : sampler->views()) {
        if (view.snapshot) devices.emplace(view.snapshot->device.index, gpu_key(view.snapshot->device));
      }
      lock.unlock();  // file reads: the calls need not wait for them
      std::vector<std::string> problems;
      GpuJobs mapped = read_job_mapping(options_.mapping_dir, devices, problems);
      for (const std::string& problem : problems) {
        if (std::find(reported.begin(), reported.end(), problem) == reported.end()) {
          std::fprintf(stderr, "hipstack-smid: job mapping: %s\n", problem.c_str());
        }
      }
      reported = std::move(problems);
      lock.lock();
      mapped_ = std::move(mapped);
    }
    publish_gpu_jobs();
  }
  // Stopping: the samples taken since the last look are written too.
  count_and_save(*source_());
}

void JobAccounting::count_and_save(const Sampler& sampler) {
  if (!store_) return;
  for (auto& [id, job] : running_) {
    if (!count_samples(job, sampler)) continue;
    try {
      store_->save_usage(job);
    } catch (const JobStoreError& e) {
      // Kept in memory and written with the next sample; the log says the disk refused.
      std::fprintf(stderr, "hipstack-smid: job %s: %s\n", id.c_str(), e.what());
    }
  }
}

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
        JobAccounting::check_id(line);
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
