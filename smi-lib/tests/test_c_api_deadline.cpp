// The C API's read deadline (hipstack_smi_open_options.read_deadline_ms, docs/api.md): a FIFO stands
// in for a file of a wedged driver (its open blocks until a writer comes). A call past the deadline
// answers TIMED_OUT, later calls about that GPU answer at once, the other GPUs and a change are not
// held up, and once the read returns the GPU answers again.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <hipstack/smi.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "capture_helpers.hpp"

namespace {

namespace fs = std::filesystem;
using hipstack::smi::testing::ScratchDir;
using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kDeadlineMs = 300;  // where the deadline must pass (a FIFO in discovery)
// Where the System must open first (8 GPUs) and the other GPUs answer: room for a loaded sanitizer
// run (300 ms timed out the open of the 8-GPU copy beside other tests under ASan).
constexpr std::uint32_t kOpenDeadlineMs = 2000;

// A copy of the 8-GPU capture to plant FIFOs in.
class DeadlineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::copy(std::string(HIPSTACK_CAPTURES_DIR) + "/constructed/mi300x-8gpu-spx-nps1/sys", sys_,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }

  hipstack_smi_open_options options(std::uint32_t deadline_ms) const {
    hipstack_smi_open_options o = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_open_options);
    o.sysfs_root = sys_string_.c_str();
    o.flags = HIPSTACK_SMI_OPEN_NO_NVML;
    o.read_deadline_ms = deadline_ms;
    return o;
  }

  // The copy opened with kOpenDeadlineMs (nullptr on failure); `device` is card0's index.
  hipstack_smi_system* open_with_deadline(std::uint32_t& device) const {
    const hipstack_smi_open_options o = options(kOpenDeadlineMs);
    hipstack_smi_system* system = nullptr;
    EXPECT_EQ(hipstack_smi_open(&o, &system), HIPSTACK_SMI_OK) << hipstack_smi_last_error();
    if (system != nullptr && hipstack_smi_device_resolve(system, kBdf, &device) != HIPSTACK_SMI_OK) {
      ADD_FAILURE() << hipstack_smi_last_error();
      hipstack_smi_close(system);
      return nullptr;
    }
    return system;
  }

  // The device folder of card0 of the copy, GPU 0000:05:00.0 (its uevent's PCI_SLOT_NAME).
  fs::path device_dir() const { return sys_ / "class/drm/card0/device"; }
  static constexpr const char* kBdf = "0000:05:00.0";

  // Puts a FIFO where `file` is; release() gives the blocked reader `text` and leaves a regular file
  // with it in place, so the GPU reads normally again.
  class Fifo {
   public:
    explicit Fifo(fs::path file) : file_(std::move(file)) {
      fs::remove(file_);
      EXPECT_EQ(::mkfifo(file_.c_str(), 0600), 0) << file_;
    }
    ~Fifo() { release("0\n"); }
    Fifo(const Fifo&) = delete;
    Fifo& operator=(const Fifo&) = delete;

    void release(const std::string& text) {
      if (released_) return;
      released_ = true;
      // Succeeds only while a reader waits in open(); none waiting: no read to release.
      const int fd = ::open(file_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      const fs::path regular = file_.string() + ".regular";
      std::ofstream(regular) << text;
      fs::rename(regular, file_);
      if (fd >= 0) {
        EXPECT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
        ::close(fd);
      }
    }

   private:
    fs::path file_;
    bool released_ = false;
  };

  ScratchDir scratch_{"hipstack-c-deadline"};
  fs::path sys_ = scratch_.path() / "sys";
  std::string sys_string_ = sys_.string();
};

std::string last_error() { return hipstack_smi_last_error(); }

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The reading of gpu_busy (the file gpu_busy_percent) in a sample, or the call's result when it failed.
hipstack_smi_result busy_percent(const hipstack_smi_system* system, std::uint32_t device, double& value) {
  hipstack_smi_metric_info info = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_metric_info);
  EXPECT_EQ(hipstack_smi_metric_by_name("gpu_busy", &info), HIPSTACK_SMI_OK);
  hipstack_smi_sample_options what = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_sample_options);
  what.metrics = &info.id;
  what.metric_count = 1;
  hipstack_smi_list* readings = nullptr;
  const hipstack_smi_result result = hipstack_smi_sample_device(system, device, &what, &readings);
  if (result != HIPSTACK_SMI_OK) return result;
  hipstack_smi_reading r = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_reading);
  EXPECT_EQ(hipstack_smi_list_find_reading(readings, info.id, "", &r), HIPSTACK_SMI_OK);
  value = r.status == HIPSTACK_SMI_STATUS_OK ? r.real : -1;
  hipstack_smi_list_free(readings);
  return result;
}

hipstack_smi_control_outcome dry_run_power_cap(hipstack_smi_system* system, std::uint32_t device, hipstack_smi_refusal_reason& reason) {
  hipstack_smi_control_request request = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_control_request);
  request.kind = HIPSTACK_SMI_CONTROL_POWER_CAP;
  request.flags = HIPSTACK_SMI_CONTROL_DRY_RUN;
  request.value = 500;
  request.settle_timeout_ms = 200;
  hipstack_smi_control_result result = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_control_result);
  hipstack_smi_list* writes = nullptr;
  EXPECT_EQ(hipstack_smi_control(system, device, &request, &result, &writes), HIPSTACK_SMI_OK) << last_error();
  hipstack_smi_list_free(writes);
  reason = result.reason;
  return result.outcome;
}

TEST_F(DeadlineTest, OpenGivesUpOnAFifoInEveryDiscoveryFile) {
  for (const char* name : {"vendor", "device", "uevent", "unique_id"}) {
    SCOPED_TRACE(name);
    // A copy each (of a one-GPU capture, small): a released read goes on discovering in its own
    // copy, away from the next FIFO. The capture has no `device` file; a real GPU's folder has one.
    ScratchDir own("hipstack-c-deadline-open");
    const fs::path sys = own.path() / "sys";
    fs::copy(std::string(HIPSTACK_CAPTURES_DIR) + "/real/lact/rx6900xt/sys", sys,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    Fifo fifo(sys / "class/drm/card0/device" / name);
    hipstack_smi_open_options o = options(kDeadlineMs);
    const std::string root = sys.string();
    o.sysfs_root = root.c_str();
    hipstack_smi_system* system = reinterpret_cast<hipstack_smi_system*>(0x1);
    const auto start = Clock::now();
    ASSERT_EQ(hipstack_smi_open(&o, &system), HIPSTACK_SMI_ERROR_TIMED_OUT) << last_error();
    EXPECT_LT(seconds_since(start), 5.0);
    EXPECT_EQ(system, nullptr);
    EXPECT_NE(last_error().find("finding the GPUs: no answer within 300 ms"), std::string::npos) << last_error();
    EXPECT_STREQ(hipstack_smi_result_string(HIPSTACK_SMI_ERROR_TIMED_OUT), "timed out");
  }
}

TEST_F(DeadlineTest, AStuckGpuAnswersAtOnceAndHoldsUpNothingElse) {
  std::uint32_t stuck = 0;
  hipstack_smi_system* system = open_with_deadline(stuck);
  ASSERT_NE(system, nullptr);
  const std::uint32_t other = stuck == 0 ? 1 : 0;
  Fifo fifo(device_dir() / "gpu_busy_percent");

  double busy = 0;
  ASSERT_EQ(busy_percent(system, stuck, busy), HIPSTACK_SMI_ERROR_TIMED_OUT);
  EXPECT_NE(last_error().find(fmt::format("GPU {}: no answer within {} ms", stuck, kOpenDeadlineMs)), std::string::npos) << last_error();
  // Later calls about that GPU do not wait again: the read is still running.
  EXPECT_EQ(busy_percent(system, stuck, busy), HIPSTACK_SMI_ERROR_TIMED_OUT);
  EXPECT_NE(last_error().find("has not returned yet"), std::string::npos) << last_error();
  const std::uint32_t gpu_busy = HIPSTACK_SMI_METRIC_gpu_busy;
  hipstack_smi_value value{};
  EXPECT_EQ(hipstack_smi_read_values(system, stuck, &gpu_busy, 1, &value), HIPSTACK_SMI_ERROR_TIMED_OUT);
  EXPECT_NE(last_error().find(fmt::format("GPU {}: a read that began", stuck)), std::string::npos) << last_error();
  hipstack_smi_list* partitions = nullptr;
  EXPECT_EQ(hipstack_smi_get_partitions(system, stuck, &partitions), HIPSTACK_SMI_ERROR_TIMED_OUT);
  EXPECT_EQ(partitions, nullptr);
  // The other GPUs and the node answer.
  EXPECT_EQ(busy_percent(system, other, busy), HIPSTACK_SMI_OK) << last_error();
  EXPECT_GE(busy, 0);
  std::uint32_t count = 0;
  EXPECT_EQ(hipstack_smi_device_count(system, &count), HIPSTACK_SMI_OK) << last_error();
  EXPECT_EQ(count, 8u);
  // A change does not wait on the stuck read (it holds the System shared): refused in time.
  hipstack_smi_refusal_reason reason = HIPSTACK_SMI_REASON_NONE;
  EXPECT_EQ(dry_run_power_cap(system, other, reason), HIPSTACK_SMI_CONTROL_REFUSED);
  EXPECT_EQ(reason, HIPSTACK_SMI_REASON_TIMED_OUT);

  // The read returns: the GPU answers again (with what the file now holds), and a change is planned.
  fifo.release("37\n");
  const auto start = Clock::now();
  hipstack_smi_result result = HIPSTACK_SMI_ERROR_TIMED_OUT;
  while (result == HIPSTACK_SMI_ERROR_TIMED_OUT && seconds_since(start) < 10) {
    result = busy_percent(system, stuck, busy);
    if (result == HIPSTACK_SMI_ERROR_TIMED_OUT) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // not spinning beside the read
  }
  ASSERT_EQ(result, HIPSTACK_SMI_OK) << last_error();
  EXPECT_EQ(busy, 37);
  ASSERT_EQ(hipstack_smi_read_values(system, stuck, &gpu_busy, 1, &value), HIPSTACK_SMI_OK) << last_error();
  EXPECT_EQ(value.status, HIPSTACK_SMI_STATUS_OK);
  EXPECT_EQ(value.real, 37);
  EXPECT_EQ(dry_run_power_cap(system, other, reason), HIPSTACK_SMI_CONTROL_PLANNED) << hipstack_smi_reason_name(reason);
  hipstack_smi_close(system);
}

// A poller's read of one metric reads only that metric's files: with a FIFO where another metric's
// file is (pp_dpm_sclk, a clock table; the RAS folder's counts), the power still answers at once.
TEST_F(DeadlineTest, AOneMetricReadTouchesOnlyItsFiles) {
  std::uint32_t device = 0;
  hipstack_smi_system* system = open_with_deadline(device);
  ASSERT_NE(system, nullptr);
  Fifo clocks(device_dir() / "pp_dpm_sclk");
  Fifo mode(device_dir() / "power_dpm_force_performance_level");
  const std::uint32_t power = HIPSTACK_SMI_METRIC_power_current;
  hipstack_smi_value value{};
  const auto start = Clock::now();
  ASSERT_EQ(hipstack_smi_read_values(system, device, &power, 1, &value), HIPSTACK_SMI_OK) << last_error();
  EXPECT_LT(seconds_since(start), kOpenDeadlineMs / 2000.0);
  EXPECT_EQ(value.status, HIPSTACK_SMI_STATUS_OK);
  EXPECT_GT(value.real, 0);
  // The FIFOs do hold a read: the clock, whose table is one, times out.
  const std::uint32_t sclk = HIPSTACK_SMI_METRIC_clock_sclk;
  EXPECT_EQ(hipstack_smi_read_values(system, device, &sclk, 1, &value), HIPSTACK_SMI_ERROR_TIMED_OUT);
  hipstack_smi_close(system);
}

// Closing the handle while a read is stuck leaves the System to that read's thread.
TEST_F(DeadlineTest, CloseWhileAReadIsStuck) {
  std::uint32_t stuck = 0;
  hipstack_smi_system* system = open_with_deadline(stuck);
  ASSERT_NE(system, nullptr);
  Fifo fifo(device_dir() / "gpu_busy_percent");
  double busy = 0;
  ASSERT_EQ(busy_percent(system, stuck, busy), HIPSTACK_SMI_ERROR_TIMED_OUT);
  hipstack_smi_close(system);
  fifo.release("5\n");  // the abandoned read ends and drops the last reference (ASan: no use after free)
}

TEST_F(DeadlineTest, NoDeadlineWaitsForTheKernel) {
  const hipstack_smi_open_options o = options(HIPSTACK_SMI_NO_READ_DEADLINE);
  hipstack_smi_system* system = nullptr;
  ASSERT_EQ(hipstack_smi_open(&o, &system), HIPSTACK_SMI_OK) << last_error();
  std::uint32_t device = 0;
  ASSERT_EQ(hipstack_smi_device_resolve(system, kBdf, &device), HIPSTACK_SMI_OK);
  const fs::path file = device_dir() / "gpu_busy_percent";
  fs::remove(file);
  ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
  // The writer's open waits for the reader: the value arrives whenever the sample reaches it.
  std::thread writer([&file] { std::ofstream(file) << "61\n"; });
  double busy = 0;
  EXPECT_EQ(busy_percent(system, device, busy), HIPSTACK_SMI_OK) << last_error();
  EXPECT_EQ(busy, 61);
  // A sample that never opened the FIFO leaves the writer waiting: a reader of our own ends it.
  const int unblock = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  writer.join();
  if (unblock >= 0) ::close(unblock);
  hipstack_smi_close(system);
}

// The threads of this process now, by id.
std::set<std::string> threads() {
  std::set<std::string> ids;
  for (const auto& entry : fs::directory_iterator("/proc/self/task")) ids.insert(entry.path().filename().string());
  return ids;
}

std::size_t thread_count() { return threads().size(); }

// Waits (bounded) for the process to have at most `count` threads: an ended worker leaves the task
// list a moment after it said it ended.
bool threads_drop_to(std::size_t count) {
  const auto start = Clock::now();
  while (thread_count() > count) {
    if (seconds_since(start) > 5) return false;  // an idle worker ends of itself after 10 s
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

// Calls hand their reads to workers kept between calls: a poller's calls do not start a thread each,
// and closing the handle ends the kept workers.
TEST_F(DeadlineTest, WorkersAreKeptBetweenCallsAndEndAtClose) {
  const std::size_t before = thread_count();
  std::uint32_t device = 0;
  hipstack_smi_system* system = open_with_deadline(device);
  ASSERT_NE(system, nullptr);
  double busy = 0;
  ASSERT_EQ(busy_percent(system, device, busy), HIPSTACK_SMI_OK) << last_error();
  const std::set<std::string> after_one = threads();
  EXPECT_EQ(after_one.size(), before + 1) << "one call, one kept worker";
  for (int i = 0; i < 200; ++i) ASSERT_EQ(busy_percent(system, device, busy), HIPSTACK_SMI_OK) << last_error();
  EXPECT_EQ(threads(), after_one) << "200 calls in a row ran on other threads than the first call's worker";
  // Calls from several threads at once get workers of their own (none waits for another's read).
  std::vector<std::thread> callers;
  std::atomic<int> failed = 0;
  for (std::uint32_t gpu = 0; gpu < 4; ++gpu) {
    callers.emplace_back([system, gpu, &failed] {
      double value = 0;
      for (int i = 0; i < 50; ++i) failed += busy_percent(system, gpu, value) != HIPSTACK_SMI_OK ? 1 : 0;
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_LE(thread_count(), before + 8) << "more workers kept than the most idle ones (8)";
  hipstack_smi_close(system);
  EXPECT_TRUE(threads_drop_to(before)) << thread_count() << " threads after close, " << before << " before open";
}

// A poller that pauses between calls finds the lane's worker asleep (it looks for 50 µs, then sleeps
// on a futex): each call wakes it, on the same thread, and none waits for its deadline (a lost
// wake-up would answer TIMED_OUT after kOpenDeadlineMs).
TEST_F(DeadlineTest, APausingPollerWakesTheSameWorker) {
  std::uint32_t device = 0;
  hipstack_smi_system* system = open_with_deadline(device);
  ASSERT_NE(system, nullptr);
  double busy = 0;
  ASSERT_EQ(busy_percent(system, device, busy), HIPSTACK_SMI_OK) << last_error();
  const std::set<std::string> after_one = threads();
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the pause under test: the worker goes to sleep
    const auto start = Clock::now();
    ASSERT_EQ(busy_percent(system, device, busy), HIPSTACK_SMI_OK) << "call " << i << ": " << last_error();
    EXPECT_LT(seconds_since(start), kOpenDeadlineMs / 2000.0) << "call " << i << " waited for its deadline";
  }
  EXPECT_EQ(threads(), after_one) << "a call after a pause ran on another thread than the kept worker";
  hipstack_smi_close(system);
}

// Callers on several threads at once share the handle: one takes the lane (its call built in the
// lane's room), the others go to the pool's workers (and sleep on their call's state). Every answer
// is its own caller's: each thread reads its own GPU's power, alone (in the lane's room) and among
// more values than fit there, and must get what a sample of that GPU alone says.
TEST_F(DeadlineTest, CallersOnSeveralThreadsGetTheirOwnAnswers) {
  std::uint32_t first = 0;
  hipstack_smi_system* system = open_with_deadline(first);
  ASSERT_NE(system, nullptr);
  std::uint32_t count = 0;
  ASSERT_EQ(hipstack_smi_device_count(system, &count), HIPSTACK_SMI_OK) << last_error();
  ASSERT_GE(count, 4U);
  std::vector<std::uint32_t> ids;
  for (const char* name : {"power_current", "gpu_busy", "temperature_junction", "temperature_memory", "clock_mclk", "power_cap"}) {
    hipstack_smi_metric_info info = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_metric_info);
    ASSERT_EQ(hipstack_smi_metric_by_name(name, &info), HIPSTACK_SMI_OK) << name;
    ids.push_back(info.id);
  }
  // Each GPU's values read once, from one thread: what every later read must give.
  std::vector<std::vector<hipstack_smi_value>> expected(count, std::vector<hipstack_smi_value>(ids.size()));
  for (std::uint32_t gpu = 0; gpu < count; ++gpu) {
    ASSERT_EQ(hipstack_smi_read_values(system, gpu, ids.data(), ids.size(), expected[gpu].data()), HIPSTACK_SMI_OK) << last_error();
    ASSERT_EQ(expected[gpu][0].status, HIPSTACK_SMI_STATUS_OK) << "GPU " << gpu << "'s power";
  }
  constexpr int kRounds = 300;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (std::uint32_t gpu = 0; gpu < 4; ++gpu) {
    threads.emplace_back([&, gpu] {
      for (int round = 0; round < kRounds; ++round) {
        const std::size_t n = round % 2 == 0 ? 1 : ids.size();  // within the lane's room, and past it
        std::vector<hipstack_smi_value> got(n);
        if (hipstack_smi_read_values(system, gpu, ids.data(), n, got.data()) != HIPSTACK_SMI_OK) {
          ++wrong;
          continue;
        }
        for (std::size_t i = 0; i < n; ++i) {
          if (got[i].status != expected[gpu][i].status || got[i].integer != expected[gpu][i].integer ||
              got[i].real != expected[gpu][i].real) {
            ++wrong;
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0) << "answers that were not their caller's GPU's";
  hipstack_smi_close(system);
}

// A forked child has none of its parent's threads: its calls start workers of their own rather than
// hand reads to the parent's kept ones (which would leave every call to time out).
TEST_F(DeadlineTest, AForkedChildReads) {
  std::uint32_t device = 0;
  hipstack_smi_system* system = open_with_deadline(device);
  ASSERT_NE(system, nullptr);
  double busy = 0;
  ASSERT_EQ(busy_percent(system, device, busy), HIPSTACK_SMI_OK) << last_error();  // a worker is kept now
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    double value = 0;
    int code = busy_percent(system, device, value) == HIPSTACK_SMI_OK ? 0 : 1;
    if (code == 0 && busy_percent(system, device, value) != HIPSTACK_SMI_OK) code = 2;
    hipstack_smi_close(system);  // must not wait for the parent's workers
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's reads failed";
  EXPECT_EQ(busy_percent(system, device, busy), HIPSTACK_SMI_OK) << last_error();
  hipstack_smi_close(system);
}

// A caller built against the header before read_deadline_ms: its struct is accepted (the default
// deadline applies); anything shorter is refused.
TEST_F(DeadlineTest, OpenOptionsOfTheFirstVersion) {
  hipstack_smi_open_options o = options(0);
  o.struct_size = offsetof(hipstack_smi_open_options, read_deadline_ms);
  hipstack_smi_system* system = nullptr;
  ASSERT_EQ(hipstack_smi_open(&o, &system), HIPSTACK_SMI_OK) << last_error();
  hipstack_smi_close(system);
  o.struct_size -= 1;
  EXPECT_EQ(hipstack_smi_open(&o, &system), HIPSTACK_SMI_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("first version"), std::string::npos) << last_error();
}

}  // namespace
