// hipstack-validate's progress lines on stderr (progress.hpp).
#include "progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace hipstack::validate {

Progress::Progress(bool enabled, int total) : enabled_(enabled), terminal_(::isatty(STDERR_FILENO) != 0), total_(total) {}

void Progress::start(const std::string& label) {
  ++index_;
  label_ = label;
  started_ = std::chrono::steady_clock::now();
  shown_seconds_ = -1;
  if (!enabled_) return;
  if (terminal_) tick();
  else fmt::print(stderr, "[{}/{}] {} ...\n", index_, total_, label_);
  std::fflush(stderr);
}

void Progress::tick() {
  if (!enabled_ || !terminal_) return;
  const long seconds = static_cast<long>(std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count());
  if (seconds == shown_seconds_) return;
  shown_seconds_ = seconds;
  fmt::print(stderr, "\r\033[K[{}/{}] {} ... {} s", index_, total_, label_, seconds);
  std::fflush(stderr);
}

void Progress::finish(const TestResult& result) {
  if (!enabled_) return;
  fmt::print(stderr, "{}[{}/{}] {} {} ({:.1f} s){}\n", terminal_ ? "\r\033[K" : "", index_, total_, label_,
             verdict_label(result.verdict), result.seconds, result.message.empty() ? "" : ": " + result.message);
  std::fflush(stderr);
}

}  // namespace hipstack::validate
