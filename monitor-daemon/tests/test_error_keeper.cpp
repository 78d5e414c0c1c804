// The daemon's kept errors (error_keeper.hpp, error_store.hpp): what is new in the XID counters and
// the CPER rings, the store across a restart, its retention and row bound, rows it cannot trust.
#include <gtest/gtest.h>
#include <hipstack/cper.hpp>
#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <map>
#include <string>

#include "cper_builder.hpp"
#include "error_keeper.hpp"
#include "error_store.hpp"

namespace smi = hipstack::smi;
using hipstack::smid::ErrorKeeper;
using hipstack::smid::ErrorKeeperOptions;
using hipstack::smid::ErrorStore;
using hipstack::smid::StoredError;
using WallClock = std::chrono::system_clock;

namespace {

smi::DeviceSummary gpu(const std::string& uuid, const std::string& vendor = "nvidia") {
  smi::DeviceSummary d;
  d.uuid = uuid;
  d.bdf = "0000:18:00.0";
  d.vendor = vendor;
  return d;
}

smi::Reading xid_count(std::uint32_t code, std::int64_t count) {
  smi::Reading r;
  r.id = smi::MetricId::xid_errors;
  r.instance = std::to_string(code);
  r.status = smi::Status::ok;
  r.value = count;
  return r;
}

smi::Reading xid_failure(smi::Status status, int error_code, std::string detail) {
  smi::Reading r;
  r.id = smi::MetricId::xid_errors;
  r.status = status;
  r.error_code = error_code;
  r.detail = std::move(detail);
  return r;
}

smi::CperRing ring_of(const std::vector<cper_test::Bytes>& records) {
  smi::CperRing ring;
  const cper_test::Bytes bytes = cper_test::ring(records);
  ring.scan = smi::scan_cper(bytes);
  return ring;
}

cper_test::Time minutes_ago(int minutes) {
  return cper_test::time_of(WallClock::to_time_t(WallClock::now() - std::chrono::minutes(minutes)));
}

std::size_t kept(const ErrorKeeper& keeper) {
  bool truncated = false;
  return keeper.list({}, {}, 100000, truncated).size();
}

class StoreDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/smid-error-store-XXXXXX";
    ASSERT_NE(::mkdtemp(name), nullptr);
    dir_ = name;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  [[nodiscard]] std::string path() const { return dir_ + "/errors.db"; }
  void sql(const char* statement) const {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path().c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, statement, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  std::string dir_;
};

TEST(ErrorKeeper, NewXidsAreTheCountersGrowth) {
  ErrorKeeper keeper({});
  const auto a = gpu("GPU-a");
  const int system1 = 0, system2 = 0;
  const auto now = WallClock::now();
  EXPECT_TRUE(keeper.observe_xids(a, &system1, {xid_count(79, 2)}, now));
  EXPECT_EQ(kept(keeper), 2u);
  EXPECT_FALSE(keeper.observe_xids(a, &system1, {xid_count(79, 2)}, now)) << "the same count is nothing new";
  EXPECT_TRUE(keeper.observe_xids(a, &system1, {xid_count(79, 3)}, now));
  EXPECT_EQ(kept(keeper), 3u);
  // A reload opens a new System, whose counters start again: its 1 is one new error.
  EXPECT_TRUE(keeper.observe_xids(a, &system2, {xid_count(79, 1)}, now));
  EXPECT_EQ(kept(keeper), 4u);
  const smi::HealthFinding f = keeper.finding("GPU-a", now);
  EXPECT_EQ(f.verdict, smi::Verdict::fail);
  EXPECT_EQ(f.reading, "XID 79 x4");
  EXPECT_EQ(smi::finding_action(f), smi::ErrorAction::contact_support) << "79 again: NVIDIA's investigatory bucket";
}

TEST(ErrorKeeper, AStormIsBounded) {
  ErrorKeeper keeper({});
  const int system = 0;
  keeper.observe_xids(gpu("GPU-a"), &system, {xid_count(13, 1000)}, WallClock::now());
  bool truncated = false;
  const auto list = keeper.list({}, {}, 1000, truncated);
  ASSERT_EQ(list.size(), ErrorKeeper::kMaxXidRowsPerLook);
  std::size_t noted = 0;
  for (const auto& e : list) noted += e.occurrence.summary.find("936 more in this sample") != std::string::npos;
  EXPECT_EQ(noted, 1u);
}

TEST(ErrorKeeper, UnreadableSourcesAreUnknown) {
  ErrorKeeper keeper({});
  const int system = 0;
  const auto now = WallClock::now();
  keeper.observe_xids(gpu("GPU-a"), &system, {xid_failure(smi::Status::unavailable, ENODATA, "no XID error since ...")}, now);
  EXPECT_EQ(keeper.finding("GPU-a", now).verdict, smi::Verdict::pass) << "no XID yet is a reading";
  keeper.observe_xids(gpu("GPU-b"), &system, {xid_failure(smi::Status::error, EIO, "nvmlEventSetWait: Unknown Error")}, now);
  const smi::HealthFinding b = keeper.finding("GPU-b", now);
  EXPECT_EQ(b.verdict, smi::Verdict::unknown);
  EXPECT_NE(b.message.find("nvmlEventSetWait: Unknown Error"), std::string::npos) << b.message;
  // An AMD GPU has no XIDs: that is no failure; its ring unreadable is.
  keeper.observe_xids(gpu("GPU-c", "amd"), &system, {xid_failure(smi::Status::not_supported, ENOTSUP, "not provided")}, now);
  smi::CperRing denied;
  denied.unavailable = "/sys/kernel/debug/dri/1/amdgpu_ring_cper: Permission denied (debugfs is root's)";
  keeper.observe_cper(gpu("GPU-c", "amd"), denied, now);
  const smi::HealthFinding c = keeper.finding("GPU-c", now);
  EXPECT_EQ(c.verdict, smi::Verdict::unknown);
  EXPECT_EQ(c.message, "its errors cannot be read: CPER: " + denied.unavailable);
  EXPECT_EQ(keeper.finding("GPU-never-seen", now).verdict, smi::Verdict::unknown);
}

TEST(ErrorKeeper, CperRecordsAreNewOnce) {
  ErrorKeeper keeper({});
  const auto amd = gpu("GPU-amd", "amd");
  const auto now = WallClock::now();
  const auto fatal = cper_test::fatal_record(minutes_ago(5)), corrected = cper_test::corrected_record(minutes_ago(4));
  EXPECT_TRUE(keeper.observe_cper(amd, ring_of({fatal, corrected}), now));
  EXPECT_FALSE(keeper.observe_cper(amd, ring_of({fatal, corrected}), now)) << "the same ring again";
  EXPECT_TRUE(keeper.observe_cper(amd, ring_of({fatal, corrected, cper_test::threshold_record(1, minutes_ago(1))}), now));
  EXPECT_EQ(kept(keeper), 3u);
  const auto counts = keeper.cper_counts("GPU-amd");
  ASSERT_EQ(counts.size(), 3u);
  std::map<std::pair<std::string, std::string>, std::uint64_t> by;
  for (const auto& c : counts) by[{c.severity, c.action}] = c.records;
  EXPECT_EQ((by[{"fatal", "reset_gpu"}]), 1u);
  EXPECT_EQ((by[{"corrected", "none"}]), 1u);
  EXPECT_EQ((by[{"fatal", "contact_support"}]), 1u);
  const auto events = keeper.cper_after(1, 10);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events.back().occurrence.action, smi::ErrorAction::contact_support);
  EXPECT_EQ(smi::finding_action(keeper.finding("GPU-amd", now)), smi::ErrorAction::contact_support);
}

TEST_F(StoreDir, KeptAcrossARestartAndNotCountedAgain) {
  ErrorKeeperOptions options;
  options.db_path = path();
  const auto amd = gpu("GPU-amd", "amd");
  const auto fatal = cper_test::fatal_record(minutes_ago(5));
  const int system = 0;
  {
    ErrorKeeper keeper(options);
    ASSERT_EQ(keeper.unavailable(), "");
    keeper.observe_cper(amd, ring_of({fatal}), WallClock::now());
    keeper.observe_xids(gpu("GPU-nv"), &system, {xid_count(48, 1)}, WallClock::now());
  }  // stopping writes what is pending
  ErrorKeeper again(options);
  EXPECT_EQ(kept(again), 2u);
  EXPECT_EQ(again.finding("GPU-nv", WallClock::now()).verdict, smi::Verdict::fail);
  EXPECT_FALSE(again.observe_cper(amd, ring_of({fatal}), WallClock::now())) << "the ring's record was stored by the first run";
  EXPECT_TRUE(again.cper_counts("GPU-amd").empty());
  again.stop();
  ErrorStore store(path());
  std::vector<std::string> problems;
  EXPECT_EQ(store.load({}, 100, problems).size(), 2u);
  EXPECT_TRUE(problems.empty());
}

TEST_F(StoreDir, RetentionAndRowBound) {
  ErrorStore store(path());
  std::vector<StoredError> errors;
  const auto now = WallClock::now();
  for (int i = 0; i < 10; ++i) {
    StoredError e;
    e.uuid = "GPU-a";
    e.bdf = "0000:18:00.0";
    e.occurrence = {now - std::chrono::hours(24 * i), smi::ErrorSource::xid, 13, smi::ErrorAction::restart_app, "XID 13"};
    e.seen = e.occurrence.at;
    errors.push_back(e);
  }
  store.add(errors);
  EXPECT_EQ(store.prune(now - std::chrono::hours(24 * 7) + std::chrono::minutes(1), 1000), 3u) << "7, 8 and 9 days old";
  EXPECT_EQ(store.prune({}, 4), 3u) << "the oldest beyond 4 rows";
  std::vector<std::string> problems;
  const auto left = store.load({}, 100, problems);
  ASSERT_EQ(left.size(), 4u);
  EXPECT_GT(left.front().occurrence.at, now - std::chrono::hours(24 * 4)) << "the newest stay";
}

TEST_F(StoreDir, RowsThatCannotBeTrueAreLeftOutAndNamed) {
  { ErrorStore store(path()); }
  sql("INSERT INTO gpu_errors (at_ns, seen_ns, uuid, bdf, source, code, action, summary) VALUES "
      "(1796652000000000000, 1796652000000000000, 'GPU-a', '0000:18:00.0', 'bogus', 79, 'reboot_node', 'x'),"
      "(5, 5, 'GPU-a', '0000:18:00.0', 'xid', 79, 'reboot_node', 'x'),"
      "(1796652000000000000, 1796652000000000000, 'GPU-a', '0000:18:00.0', 'xid', 79, 'shrug', 'x'),"
      "(1796652000000000000, 1796652000000000000, 'GPU-a', '0000:18:00.0', 'cper', 9, 'none', 'x'),"
      "(1796652000000000000, 1796652000000000000, 'GPU-a', '0000:18:00.0', 'xid', 79, 'reboot_node', 'fine')");
  ErrorStore store(path());
  std::vector<std::string> problems;
  const auto rows = store.load({}, 100, problems);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].occurrence.summary, "fine");
  ASSERT_EQ(problems.size(), 4u);
  // In the order the rows are read (by time): the one from 1970 first.
  EXPECT_NE(problems[0].find("a time before 2000"), std::string::npos) << problems[0];
  EXPECT_NE(problems[1].find("an unknown source"), std::string::npos) << problems[1];
  EXPECT_NE(problems[2].find("an unknown action"), std::string::npos) << problems[2];
  EXPECT_NE(problems[3].find("code 9"), std::string::npos) << problems[3];
}

TEST_F(StoreDir, NeverThroughALink) {
  std::filesystem::create_symlink(dir_ + "/elsewhere.db", path());
  ErrorKeeperOptions options;
  options.db_path = path();
  ErrorKeeper keeper(options);
  EXPECT_NE(keeper.unavailable().find("symbolic link"), std::string::npos) << keeper.unavailable();
  const int system = 0;
  EXPECT_TRUE(keeper.observe_xids(gpu("GPU-a"), &system, {xid_count(79, 1)}, WallClock::now())) << "kept in memory all the same";
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/elsewhere.db"));
}

}  // namespace
