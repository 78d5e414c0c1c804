// Job accounting (docs/jobs.md): a batch system's prolog starts a job on some GPUs, its epilog
// stops it, and in between every live sample of those GPUs is counted into the job's usage
// (job_usage.hpp) and written through to the job store (job_store.hpp). A thread of its own reads
// the sampler's history, so sampling never waits on the database. It also reads the job-mapping
// folder (one file per GPU index naming its jobs, as dcgm-exporter reads it), whose jobs label
// their GPUs' attribution series like the started ones.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "job_input.hpp"
#include "job_store.hpp"
#include "sampler.hpp"

namespace hipstack::smid {


struct JobAccountingOptions {
  std::string db_path;       // the job store; "" = none (job_db = off: the mapping folder alone)
  std::string mapping_dir;   // "" : none
  std::chrono::milliseconds poll{500};   // how often the sampler's new samples are counted
  double max_gap_s = 10;     // samples further apart stand for no time (JobGpuUsage::fold)
  std::chrono::hours retention{24 * 90};  // stopped jobs older than this are deleted; 0: kept
  // A running job's usage is written at most this often (and always at its stop and the daemon's):
  // 1,024 running 8-GPU jobs rewritten every poll were 42.6 MB/s.
  std::chrono::seconds save_every{30};
  std::chrono::hours max_running{24 * 30};  // a job running longer is stopped by the daemon; 0: never
};

class JobAccounting {
 public:
  using SamplerSource = std::function<std::shared_ptr<const Sampler>()>;
  static constexpr std::size_t kMaxRunning = 1024;

  // Opens the store and resumes its running jobs. A store that cannot be opened leaves the
  // accounting unavailable (every call says why); the daemon runs on.
  JobAccounting(JobAccountingOptions options, SamplerSource source);
  ~JobAccounting();
  JobAccounting(const JobAccounting&) = delete;
  JobAccounting& operator=(const JobAccounting&) = delete;

  // The store's problem when it could not be opened; empty when it works.
  [[nodiscard]] const std::string& unavailable() const noexcept { return store_error_; }

  // Starts accounting `devices` (indices into the sampler's views; all when empty) for job `id`.
  // Starting a running job again with the same GPUs and user returns it as it runs, with `again`
  // set (a prolog retried after its first call timed out); with others it is refused (exists).
  JobRecord start(const std::string& id, const std::vector<std::uint32_t>& devices, const std::string& user, const std::string& who,
                  bool& again);
  JobRecord start(const std::string& id, const std::vector<std::uint32_t>& devices, const std::string& user, const std::string& who) {
    bool again = false;
    return start(id, devices, user, who, again);
  }
  // Stops job `id` after counting the samples taken so far. A job stopped before is returned as
  // it was, with `already` set (an epilog run twice). When the store cannot write the stop (a full
  // disk), the job is stopped all the same (it no longer holds a running slot) and its record is
  // written again each poll until the store takes it.
  JobRecord stop(const std::string& id, const std::string& who, bool& already);
  // Reads: the store's rows through a connection of their own (SQLite's WAL lets them read while
  // the writer writes), so a slow list never holds up a start or a stop; running jobs as they are.
  [[nodiscard]] JobRecord get(const std::string& id);
  [[nodiscard]] std::vector<JobRecord> list(std::int64_t since_ns, std::size_t limit, bool& truncated);
  [[nodiscard]] std::shared_ptr<const GpuJobs> gpu_jobs() const;

 private:
  void run();
  // Counts the job's new samples (mutex_ held; `views` are the sampler's); true when any changed.
  bool count_samples(JobRecord& job, const Sampler& sampler, const std::vector<Sampler::View>& views);
  // Every running job's new samples counted; written when save_every has passed since the last
  // write, or `now`. mutex_ held.
  void count_and_save(const Sampler& sampler, bool now);
  // Counts, stamps and writes a running job's stop; the job leaves running_ either way (mutex_ held).
  JobRecord finish(std::map<std::string, JobRecord>::iterator found, const std::string& who, const Sampler& sampler);
  void retry_unwritten();   // mutex_ held
  void expire_old_jobs(const Sampler& sampler);  // mutex_ held
  // One line when writing the running jobs starts or stops failing, not one per job and poll.
  void report_save(const std::string& error, std::size_t jobs);
  void publish_gpu_jobs();  // mutex_ held
  JobStore& store();        // mutex_ held; throws unavailable
  JobStore& reader();       // reader_mutex_ held (mutex_ not); throws unavailable

  JobAccountingOptions options_;
  SamplerSource source_;
  std::string store_error_;
  mutable std::mutex mutex_;
  std::unique_ptr<JobStore> store_;
  std::mutex reader_mutex_;              // taken before mutex_ when both are held, never after
  std::unique_ptr<JobStore> reader_;     // the reads' connection; null when store_ is
  std::map<std::string, JobRecord> running_;
  std::set<std::string> unsaved_;             // running jobs counted since their last write
  std::chrono::steady_clock::time_point next_save_{};
  std::string save_error_;                    // the last write failure logged; "" when writes work
  std::map<std::string, JobRecord> unwritten_;  // stopped jobs whose stop the store has not taken yet
  GpuJobs mapped_;                            // the mapping folder's, as last read
  // running_ and mapped_ together, for /metrics: under a mutex of its own, so that a scrape never
  // waits for the job store's disk (mutex_ is held while it writes).
  mutable std::mutex published_mutex_;
  std::shared_ptr<const GpuJobs> gpu_jobs_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;  // last: started when everything else is ready
};

}  // namespace hipstack::smid
