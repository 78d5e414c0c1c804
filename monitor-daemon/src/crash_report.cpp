// The crash report written when hipstack-smid dies of a fatal signal, async-signal-safe
// (crash_report.hpp).
#include "crash_report.hpp"

#include <execinfo.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>

namespace hipstack::smid {
namespace {

// Only async-signal-safe calls from here on: write(2), prctl(2), and backtrace(3), whose library is
// loaded before any signal (install_crash_report calls it once).
void say(const char* text) noexcept {
  const ssize_t written = ::write(STDERR_FILENO, text, std::strlen(text));
  static_cast<void>(written);
}

void say_hex(std::uintptr_t value) noexcept {
  char text[2 + 16 + 1] = {'0', 'x'};
  for (int i = 0; i < 16; ++i) text[2 + i] = "0123456789abcdef"[(value >> (60 - 4 * i)) & 0xf];
  say(text);
}

void on_fatal_signal(int signal, siginfo_t* info, void*) {
  char thread[17] = {};
  ::prctl(PR_GET_NAME, thread, 0, 0, 0);
  say("hipstack-smid: fatal signal SIG");
  const char* name = ::sigabbrev_np(signal);
  say(name != nullptr ? name : "?");
  say(" at address ");
  say_hex(reinterpret_cast<std::uintptr_t>(info != nullptr ? info->si_addr : nullptr));
  say(" in thread ");
  say(thread);
  say("; return addresses:\n");
  void* frames[64];
  const int count = ::backtrace(frames, 64);
  ::backtrace_symbols_fd(frames, count, STDERR_FILENO);
  // SA_RESETHAND restored the default action: the signal, pending until this returns, ends the
  // process as it would have without the report.
  ::raise(signal);
}

}  // namespace

void install_crash_report() noexcept {
  void* frame[1];
  static_cast<void>(::backtrace(frame, 1));  // loads libgcc's unwinder now, not inside the handler
  struct sigaction action {};
  action.sa_sigaction = on_fatal_signal;
  action.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (const int signal : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) ::sigaction(signal, &action, nullptr);
}

}  // namespace hipstack::smid
