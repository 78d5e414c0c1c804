// Job accounting: jobs started and stopped, their usage summed from the live samples
// (job_accounting.hpp).
#include "job_accounting.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "thread_name.hpp"

namespace hipstack::smid {
namespace {

using Clock = std::chrono::steady_clock;

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


}  // namespace

namespace {
constexpr const char* kOff = "job accounting is off in the daemon's configuration (job_db = off)";

// The rows a read left out (JobStore::take_bad_rows), in the log.
void log_bad_rows(JobStore& store) {
  for (const std::string& row : store.take_bad_rows()) std::fprintf(stderr, "hipstack-smid: %s\n", row.c_str());
}
}  // namespace

JobAccounting::JobAccounting(JobAccountingOptions options, SamplerSource source)
    : options_(std::move(options)), source_(std::move(source)), next_save_(Clock::now() + options_.save_every) {
  try {
    if (options_.db_path.empty()) throw std::runtime_error(kOff);
    store_ = std::make_unique<JobStore>(options_.db_path);
    reader_ = std::make_unique<JobStore>(options_.db_path);
    auto resumed = store_->running();
    log_bad_rows(*store_);
    for (JobRecord& job : resumed) {
      for (const std::string& problem : job.problems) std::fprintf(stderr, "hipstack-smid: %s\n", problem.c_str());
      std::string id = job.id;
      running_.emplace(std::move(id), std::move(job));
    }
    if (!running_.empty()) std::fprintf(stderr, "hipstack-smid: job accounting resumed %zu running job(s)\n", running_.size());
  } catch (const std::exception& e) {
    store_.reset();
    reader_.reset();
    store_error_ = e.what();
    if (!options_.db_path.empty()) std::fprintf(stderr, "hipstack-smid: job accounting is unavailable: %s\n", store_error_.c_str());
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
  if (!store_) {
    throw JobRequestError(JobRequestError::Kind::unavailable, options_.db_path.empty() ? store_error_ : "job accounting is unavailable: " + store_error_);
  }
  return *store_;
}

JobRecord JobAccounting::start(const std::string& id, const std::vector<std::uint32_t>& devices, const std::string& user,
                               const std::string& who, bool& again) {
  check_job_id(id);
  check_job_user(user);
  const auto sampler = source_();
  const auto views = sampler->views();
  std::lock_guard lock(mutex_);
  JobStore& jobs = store();
  again = false;
  if (const auto found = running_.find(id); found != running_.end()) {
    // The same start again (a prolog whose first call timed out after the daemon had started the
    // job): the running job, not an error, so the retry succeeds and the job is accounted once.
    std::vector<std::uint32_t> held;
    for (const JobGpuUsage& gpu : found->second.gpus) held.push_back(gpu.index);
    std::vector<std::uint32_t> asked = devices;
    if (asked.empty()) {
      for (const Sampler::View& view : views) {
        if (view.snapshot) asked.push_back(view.snapshot->device.index);
      }
    }
    std::sort(held.begin(), held.end());
    std::sort(asked.begin(), asked.end());
    if (held == asked && found->second.user == user) {
      again = true;
      return found->second;
    }
    throw JobRequestError(JobRequestError::Kind::exists, fmt::format("job {} is running on other GPUs or for another user", id));
  }
  // Stops the store has not taken yet count too: what the daemon holds in memory stays bounded.
  if (running_.size() + unwritten_.size() >= kMaxRunning) {
    throw JobRequestError(JobRequestError::Kind::exhausted,
                          fmt::format("{} jobs are running and {} stopped ones wait for the store: stop one first",
                                      running_.size(), unwritten_.size()));
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
    log_bad_rows(jobs);
    throw JobRequestError(JobRequestError::Kind::exists,
                          fmt::format("job {} was accounted already (started {} ns after the epoch): an id is accounted once",
                                      id, stored ? stored->started_ns : 0));
  }
  auto& running = running_.emplace(id, std::move(job)).first->second;
  publish_gpu_jobs();
  return running;
}

JobRecord JobAccounting::stop(const std::string& id, const std::string& who, bool& already) {
  check_job_id(id);
  const auto sampler = source_();
  std::lock_guard lock(mutex_);
  JobStore& jobs = store();
  const auto found = running_.find(id);
  if (found == running_.end()) {
    already = true;
    if (const auto unwritten = unwritten_.find(id); unwritten != unwritten_.end()) return unwritten->second;
    auto stored = jobs.get(id);
    log_bad_rows(jobs);
    if (!stored) throw JobRequestError(JobRequestError::Kind::not_found, fmt::format("no job {}", id));
    return std::move(*stored);
  }
  already = false;
  return finish(found, who, *sampler);
}

JobRecord JobAccounting::finish(std::map<std::string, JobRecord>::iterator found, const std::string& who, const Sampler& sampler) {
  JobRecord job = std::move(found->second);
  running_.erase(found);
  unsaved_.erase(job.id);
  const auto views = sampler.views();
  count_samples(job, sampler, views);
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
  try {
    store().finish(job);
  } catch (const JobStoreError& e) {
    // The job is stopped here all the same: it must not hold a running slot, or a full disk would
    // leave every job running and block every start. Its record is written again each poll.
    std::fprintf(stderr, "hipstack-smid: job %s stopped, but its record is not written yet (tried again each poll): %s\n",
                 job.id.c_str(), e.what());
    unwritten_.insert_or_assign(job.id, job);
  }
  publish_gpu_jobs();
  return job;
}

void JobAccounting::retry_unwritten() {
  for (auto it = unwritten_.begin(); it != unwritten_.end();) {
    try {
      store_->finish(it->second);
      std::fprintf(stderr, "hipstack-smid: job %s: its stop is written now\n", it->first.c_str());
      it = unwritten_.erase(it);
    } catch (const JobStoreError&) {
      return;  // the store still refuses: said once at the stop
    }
  }
}

void JobAccounting::expire_old_jobs(const Sampler& sampler) {
  if (options_.max_running.count() == 0) return;
  const std::int64_t oldest = now_ns() - std::chrono::duration_cast<std::chrono::nanoseconds>(options_.max_running).count();
  const std::string who = fmt::format("hipstack-smid: running longer than {} h (job_max_running_days)", options_.max_running.count());
  for (auto it = running_.begin(); it != running_.end();) {
    const auto next = std::next(it);
    if (it->second.started_ns < oldest) {
      std::fprintf(stderr, "hipstack-smid: job %s stopped: %s\n", it->first.c_str(), who.c_str() + std::strlen("hipstack-smid: "));
      finish(it, who, sampler);
    }
    it = next;
  }
}

JobStore& JobAccounting::reader() {
  if (!reader_) {
    std::lock_guard lock(mutex_);
    store();  // throws unavailable, saying why
  }
  return *reader_;
}

JobRecord JobAccounting::get(const std::string& id) {
  check_job_id(id);
  {
    std::lock_guard lock(mutex_);
    if (const auto found = running_.find(id); found != running_.end()) return found->second;
    if (const auto found = unwritten_.find(id); found != unwritten_.end()) return found->second;
  }
  std::lock_guard read(reader_mutex_);
  auto stored = reader().get(id);
  log_bad_rows(*reader_);
  if (!stored) throw JobRequestError(JobRequestError::Kind::not_found, fmt::format("no job {}", id));
  // Started (or stopped) between the two looks: what runs now is current.
  std::lock_guard lock(mutex_);
  if (const auto found = running_.find(id); found != running_.end()) return found->second;
  return std::move(*stored);
}

std::vector<JobRecord> JobAccounting::list(std::int64_t since_ns, std::size_t limit, bool& truncated) {
  std::lock_guard read(reader_mutex_);
  auto jobs = reader().list(since_ns, limit + 1);
  log_bad_rows(*reader_);
  truncated = jobs.size() > limit;
  if (truncated) jobs.resize(limit);
  // A running job's stored usage is at most one poll old; the one here is current.
  std::lock_guard lock(mutex_);
  for (JobRecord& job : jobs) {
    if (const auto found = running_.find(job.id); found != running_.end()) job = found->second;
    if (const auto found = unwritten_.find(job.id); found != unwritten_.end()) job = found->second;
  }
  return jobs;
}

std::shared_ptr<const GpuJobs> JobAccounting::gpu_jobs() const {
  std::lock_guard lock(published_mutex_);
  return gpu_jobs_;
}

void JobAccounting::publish_gpu_jobs() {
  auto jobs = std::make_shared<GpuJobs>(mapped_);
  for (const auto& [id, job] : running_) {
    for (const JobGpuUsage& gpu : job.gpus) (*jobs)[usage_key(gpu)].insert(id);
  }
  std::lock_guard lock(published_mutex_);
  gpu_jobs_ = std::move(jobs);
}

bool JobAccounting::count_samples(JobRecord& job, const Sampler& sampler, const std::vector<Sampler::View>& views) {
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
  auto next_prune = Clock::now();
  std::vector<std::string> reported;  // the mapping folder's problems already logged
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, options_.poll, [this] { return stopping_; });
    if (stopping_) break;
    const auto sampler = source_();
    if (store_) {
      retry_unwritten();
      expire_old_jobs(*sampler);
    }
    count_and_save(*sampler, false);
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
      if (mapped != mapped_) {
        mapped_ = std::move(mapped);
        publish_gpu_jobs();
      }
    }
  }
  // Stopping: the samples taken since the last write are written too.
  count_and_save(*source_(), true);
}

void JobAccounting::count_and_save(const Sampler& sampler, bool now) {
  if (!store_ || running_.empty()) return;
  const auto views = sampler.views();
  for (auto& [id, job] : running_) {
    if (count_samples(job, sampler, views)) unsaved_.insert(id);
  }
  if (unsaved_.empty() || (!now && Clock::now() < next_save_)) return;
  next_save_ = Clock::now() + options_.save_every;
  std::string error;
  std::size_t failed = 0;
  for (auto it = unsaved_.begin(); it != unsaved_.end();) {
    try {
      store_->save_usage(running_.at(*it));
      it = unsaved_.erase(it);
    } catch (const JobStoreError& e) {
      // Kept in memory (and unsaved) and written with the next round.
      error = e.what();
      ++failed;
      ++it;
    }
  }
  report_save(error, failed);
}

void JobAccounting::report_save(const std::string& error, std::size_t jobs) {
  if (error == save_error_) return;
  if (error.empty()) {
    std::fprintf(stderr, "hipstack-smid: the running jobs' usage is written again\n");
  } else {
    std::fprintf(stderr, "hipstack-smid: the usage of %zu running job(s) could not be written (kept in memory, tried again "
                         "every job_save_interval_s): %s\n", jobs, error.c_str());
  }
  save_error_ = error;
}

}  // namespace hipstack::smid
