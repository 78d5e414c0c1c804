// process.hpp: running one module program: its stdout (the JSON result) and the tail of its stderr
// captured, a time limit enforced on its whole process group, output beyond a cap dropped.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace hipstack::validate {

struct ProcessResult {
  int exit_code = -1;       // when it exited
  int signal = 0;           // when a signal ended it (ours after a timeout, or its own crash)
  bool timed_out = false;
  bool output_truncated = false;  // stdout passed the cap
  std::string out;          // stdout, up to the cap
  std::string err_tail;     // the last few KiB of stderr
  double seconds = 0;
  std::string spawn_error;  // non-empty when the program could not be started
  std::string wait_error;   // non-empty when it ended but its status could not be read (waitpid failed)
  int stopped_by = 0;       // the signal that asked hipstack-validate to stop, ending the module early
};

class StopSignals;

struct ProcessOptions {
  std::chrono::seconds timeout{60};
  std::vector<std::string> environment;  // "NAME=value" set in the child; the rest of ours is kept
  std::function<void()> tick;            // called about every 250 ms while it runs (progress, telemetry)
  StopSignals* stop = nullptr;           // a signal received there ends the program early
};

// Runs program with args. On timeout, or when options.stop has received a signal, the process group
// gets SIGTERM, then SIGKILL 5 s later. The child gets SIGKILL should hipstack-validate die first
// (PR_SET_PDEATHSIG).
ProcessResult run_process(const std::string& program, const std::vector<std::string>& args,
                          const ProcessOptions& options);

// "SIGTERM"; "signal 70" for a number without a name.
std::string signal_name(int signal);

// "killed by SIGSEGV", "exit code 3", "timed out after 600 s (killed)" ...
std::string describe_end(const ProcessResult& r, std::chrono::seconds timeout);

}  // namespace hipstack::validate
