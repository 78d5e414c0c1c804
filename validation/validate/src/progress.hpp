// progress.hpp: one line per test on stderr while hipstack-validate runs; on a terminal the running
// test's line counts its seconds.
#pragma once

#include <chrono>
#include <string>

#include "result.hpp"

namespace hipstack::validate {

class Progress {
 public:
  Progress(bool enabled, int total);
  void start(const std::string& label);
  void tick();
  void finish(const TestResult& result);

 private:
  bool enabled_;
  bool terminal_;
  int total_;
  int index_ = 0;
  std::string label_;
  std::chrono::steady_clock::time_point started_{};
  long shown_seconds_ = -1;
};

}  // namespace hipstack::validate
