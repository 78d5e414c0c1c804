// Where job summaries are kept: the SQLite store, its schema and retention (job_store.hpp).
#include "job_store.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>
#include <variant>

#include "job_input.hpp"

namespace hipstack::smid {
namespace {

// Each step takes the schema from version N (its index) to N+1; a database is brought up step by
// step in one transaction each. Steps are never edited once released: a change is a new step.
constexpr std::array<const char*, JobStore::kSchemaVersion> kMigrations{
    // 0 -> 1: jobs, and per job each GPU's usage as JSON (job_usage.cpp writes it).
    "CREATE TABLE jobs ("
    "  id TEXT PRIMARY KEY NOT NULL,"
    "  user TEXT NOT NULL,"
    "  started_by TEXT NOT NULL,"
    "  stopped_by TEXT NOT NULL DEFAULT '',"
    "  started_ns INTEGER NOT NULL,"
    "  stopped_ns INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX jobs_by_start ON jobs (started_ns);"
    "CREATE TABLE job_gpus ("
    "  job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,"
    "  position INTEGER NOT NULL,"
    "  uuid TEXT NOT NULL,"
    "  bdf TEXT NOT NULL,"
    "  usage TEXT NOT NULL,"
    "  PRIMARY KEY (job_id, position));",
};

constexpr const char* kJobColumns = "SELECT id, user, started_by, stopped_by, started_ns, stopped_ns FROM jobs ";

}  // namespace

JobStore::JobStore(const std::string& path) : db_(path, kMigrations) {}

JobStore::~JobStore() = default;

void JobStore::write_usage(const JobRecord& job) {
  Statement remove(db_, "DELETE FROM job_gpus WHERE job_id = ?1");
  remove.bind(1, job.id).step("replacing a job's GPUs");
  Statement insert(db_, "INSERT INTO job_gpus (job_id, position, uuid, bdf, usage) VALUES (?1, ?2, ?3, ?4, ?5)");
  std::int64_t position = 0;
  for (const JobGpuUsage& gpu : job.gpus) {
    insert.reset();
    insert.bind(1, job.id).bind(2, position++).bind(3, gpu.uuid).bind(4, gpu.bdf).bind(5, to_json(gpu).dump());
    insert.step("writing a GPU's usage");
  }
}

bool JobStore::insert(const JobRecord& job) {
  Transaction transaction(db_);
  {
    Statement exists(db_, "SELECT 1 FROM jobs WHERE id = ?1");
    if (exists.bind(1, job.id).step("looking for the job")) return false;
  }
  Statement insert(db_, "INSERT INTO jobs (id, user, started_by, started_ns) VALUES (?1, ?2, ?3, ?4)");
  insert.bind(1, job.id).bind(2, job.user).bind(3, job.started_by).bind(4, job.started_ns).step("adding the job");
  write_usage(job);
  transaction.commit();
  return true;
}

void JobStore::save_usage(const JobRecord& job) {
  Transaction transaction(db_);
  write_usage(job);
  transaction.commit();
}

void JobStore::finish(const JobRecord& job) {
  Transaction transaction(db_);
  Statement stop(db_, "UPDATE jobs SET stopped_by = ?2, stopped_ns = ?3 WHERE id = ?1");
  stop.bind(1, job.id).bind(2, job.stopped_by).bind(3, job.stopped_ns).step("stopping the job");
  write_usage(job);
  transaction.commit();
}

void JobStore::load_gpus(JobRecord& job) {
  Statement gpus(db_, "SELECT position, uuid, usage FROM job_gpus WHERE job_id = ?1 ORDER BY position");
  gpus.bind(1, job.id);
  while (gpus.step("reading a job's GPUs")) {
    try {
      job.gpus.push_back(usage_from_json(nlohmann::json::parse(gpus.text(2))));
    } catch (const std::exception& e) {
      // A row edited by hand or damaged: that GPU is reported, not the whole job lost.
      job.problems.push_back(fmt::format("{}: job {} GPU {} ({}): stored usage unreadable: {}", path(), job.id, gpus.integer(0),
                                         gpus.text(1), e.what()));
    }
  }
}

std::vector<JobRecord> JobStore::query_jobs(const char* sql, const std::variant<std::int64_t, std::string>& key, std::size_t limit) {
  Statement statement(db_, (std::string(kJobColumns) + sql).c_str());
  std::visit([&statement](const auto& value) { statement.bind(1, value); }, key);
  std::vector<JobRecord> out;
  while (out.size() < limit && statement.step("reading jobs")) {
    JobRecord job;
    job.id = statement.text(0);
    job.user = statement.text(1);
    job.started_by = statement.text(2);
    job.stopped_by = statement.text(3);
    job.started_ns = statement.integer(4);
    job.stopped_ns = statement.integer(5);
    // A row is checked as a request is (the file may have been edited, or written by another
    // program): a bad one is reported and left out, never passed on to a page or a reply.
    std::string bad;
    try {
      check_job_id(job.id);
      check_job_user(job.user);
    } catch (const JobRequestError& e) {
      bad = e.what();
    }
    if (bad.empty() && (job.started_ns <= 0 || job.stopped_ns < 0 || (job.stopped_ns != 0 && job.stopped_ns < job.started_ns))) {
      bad = fmt::format("started {} ns and stopped {} ns after the epoch are no job's times", job.started_ns, job.stopped_ns);
    }
    if (!bad.empty()) {
      if (bad_rows_.size() < kMaxBadRows) {
        bad_rows_.push_back(fmt::format("{}: the row of job \"{}\" is not valid ({}): left out", path(),
                                        smi::printable_text(job.id.substr(0, 64)), bad));
      }
      continue;
    }
    for (std::string* text : {&job.started_by, &job.stopped_by}) {
      if (smi::holds_raw_bytes(*text)) *text = smi::printable_text(*text);
    }
    out.push_back(std::move(job));
  }
  for (JobRecord& job : out) load_gpus(job);
  return out;
}

std::vector<std::string> JobStore::take_bad_rows() { return std::exchange(bad_rows_, {}); }

std::optional<JobRecord> JobStore::get(const std::string& id) {
  auto found = query_jobs("WHERE id = ?1", id, 1);
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

std::vector<JobRecord> JobStore::list(std::int64_t since_ns, std::size_t limit) {
  return query_jobs("WHERE started_ns >= ?1 ORDER BY started_ns DESC, id", since_ns, limit);
}

std::vector<JobRecord> JobStore::running() {
  return query_jobs("WHERE stopped_ns = ?1 ORDER BY started_ns", std::int64_t{0}, static_cast<std::size_t>(-1));
}

std::size_t JobStore::prune(std::int64_t before_ns) {
  Statement prune(db_, "DELETE FROM jobs WHERE stopped_ns != 0 AND stopped_ns < ?1");
  prune.bind(1, before_ns).step("deleting old jobs");
  return static_cast<std::size_t>(db_.changes());
}

}  // namespace hipstack::smid
