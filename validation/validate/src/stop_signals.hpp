// stop_signals.hpp: SIGINT, SIGTERM and SIGHUP while modules run. Dying at once would leave the
// running module (its own process group, so the terminal's SIGINT never reaches it) on the GPU. The
// signal is noted instead; the module is stopped like a timed-out one, the report is written, and
// hipstack-validate then dies of the same signal (exit status 128 + signal to a shell).
#pragma once

#include <signal.h>

#include <array>

namespace hipstack::validate {

class StopSignals {
 public:
  // Installs the handlers (the previous dispositions come back in the destructor); a signal that
  // was ignored when hipstack-validate started (nohup) stays ignored. Throws std::system_error when
  // the pipe cannot be made.
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Readable once a signal has arrived: for poll().
  [[nodiscard]] int fd() const { return read_fd_; }
  // The first signal that arrived, 0 while none has. Never blocks.
  int received();

  // Default disposition, the signal unblocked, then raised: the process ends as if it had not been
  // caught (the shell sees 128 + signal).
  [[noreturn]] static void die_of(int signal);

 private:
  int read_fd_ = -1;
  int write_fd_ = -1;
  int signal_ = 0;
  std::array<struct sigaction, 3> previous_{};
};

}  // namespace hipstack::validate
