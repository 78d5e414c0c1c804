// Writes CPER records built from the specification's layouts (cper_builder.hpp) into a folder, for
// the CLI's tests (tests/cli/test_errors.py): saved records, a malformed one, and the ring's debugfs
// file. Usage: make_cper_records DIR UNIX_SECONDS (the time of the "recent" records).
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>

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

Time time_of(std::time_t when) {
  std::tm tm{};
  gmtime_r(&when, &tm);
  const int year = tm.tm_year + 1900;
  return {static_cast<std::uint8_t>(tm.tm_sec), static_cast<std::uint8_t>(tm.tm_min), static_cast<std::uint8_t>(tm.tm_hour),
          static_cast<std::uint8_t>(tm.tm_mday), static_cast<std::uint8_t>(tm.tm_mon + 1), static_cast<std::uint8_t>(year % 100),
          static_cast<std::uint8_t>(year / 100)};
}

}  // namespace

int main(int argc, char** argv) {
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
