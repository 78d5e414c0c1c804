// stop_signals.cpp: the self-pipe behind StopSignals.
#include "stop_signals.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <iterator>
#include <system_error>
#include <tuple>

namespace hipstack::validate {
namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

// The one piece of global state: a signal handler has no other way to reach the pipe. Set before the
// handlers are installed and cleared after they are removed.
volatile std::sig_atomic_t g_write_fd = -1;

// Async-signal-safe: one write to a non-blocking pipe (a full pipe already says "stop").
void on_stop_signal(int signal) {
  const int saved = errno;
  const auto byte = static_cast<unsigned char>(signal);
  (void)!::write(g_write_fd, &byte, 1);
  errno = saved;
}

}  // namespace

StopSignals::StopSignals() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  g_write_fd = write_fd_;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  static_assert(std::size(kStopSignals) == std::tuple_size_v<decltype(previous_)>);
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i) {
    ::sigaction(kStopSignals[i], nullptr, &previous_[i]);
    if (previous_[i].sa_handler != SIG_IGN) ::sigaction(kStopSignals[i], &action, nullptr);
  }
}

StopSignals::~StopSignals() {
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i) ::sigaction(kStopSignals[i], &previous_[i], nullptr);
  g_write_fd = -1;
  ::close(read_fd_);
  ::close(write_fd_);
}

int StopSignals::received() {
  unsigned char bytes[16];
  ssize_t n;
  while ((n = ::read(read_fd_, bytes, sizeof bytes)) > 0)
    if (signal_ == 0) signal_ = bytes[0];
  return signal_;
}

void StopSignals::die_of(int signal) {
  std::signal(signal, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal);
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(signal);
  std::_Exit(128 + signal);  // only if the signal did not end the process
}

}  // namespace hipstack::validate
