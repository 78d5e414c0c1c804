// Writes CPER records built from the specification's layouts (cper_builder.hpp) into a folder, for
// the CLI's and the daemon's tests (tests/cli/test_errors.py, monitor-daemon/tests/test_errors.py):
// saved records, a malformed one, and the ring's debugfs file.
// Usage: make_cper_records DIR UNIX_SECONDS (the time of the "recent" records), or
//        make_cper_records --ring FILE [KIND@UNIX_SECONDS ...]: a ring of those records (KIND: fatal,
//        corrected, recoverable, threshold, informational: the threshold record with severity 3), written whole (a new file renamed over FILE).
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "cper_builder.hpp"

using namespace cper_test;

namespace {

void write(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "make_cper_records: cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

// --ring FILE KIND@SECONDS...: the driver's ring holding these records, oldest first.
int write_ring(int argc, char** argv) {
  std::vector<Bytes> records;
  for (int i = 3; i < argc; ++i) {
    const std::string spec = argv[i];
    const auto at = spec.find('@');
    const std::string kind = spec.substr(0, at);
    const Time t = time_of(at == std::string::npos ? 0 : static_cast<std::time_t>(std::strtoll(spec.c_str() + at + 1, nullptr, 10)));
    if (kind == "fatal") records.push_back(fatal_record(t));
    else if (kind == "corrected") records.push_back(corrected_record(t));
    else if (kind == "recoverable") records.push_back(recoverable_record(t));
    else if (kind == "threshold") records.push_back(threshold_record(1, t));
    else if (kind == "informational") records.push_back(threshold_record(3, t));  // as early 6.15 kernels wrote it
    else {
      std::fprintf(stderr, "make_cper_records: %s: not fatal, corrected, recoverable, threshold or informational\n", spec.c_str());
      return 2;
    }
  }
  const std::string path = argv[2];
  write(path + ".new", ring(records));
  if (std::rename((path + ".new").c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "make_cper_records: cannot rename onto %s\n", path.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "--ring") return write_ring(argc, argv);
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_cper_records DIR UNIX_SECONDS\n");
    return 2;
  }
  const std::string dir = argv[1];
  const Time recent = time_of(static_cast<std::time_t>(std::strtoll(argv[2], nullptr, 10)));
  const Time old{0, 0, 12, 1, 1, 25, 20};  // 2025-01-01 12:00:00 UTC
  write(dir + "/fatal.cper", fatal_record(recent));
  write(dir + "/corrected.cper", corrected_record(recent));
  write(dir + "/threshold.cper", threshold_record(1, old));
  Bytes malformed = fatal_record(recent);
  put32(malformed, 12, 7);  // a severity UEFI does not define
  const Bytes good = corrected_record(recent);
  malformed.insert(malformed.end(), good.begin(), good.end());
  write(dir + "/malformed.cper", malformed);
  write(dir + "/amdgpu_ring_cper", ring({threshold_record(1, old), fatal_record(recent), corrected_record(recent)}));
  return 0;
}
