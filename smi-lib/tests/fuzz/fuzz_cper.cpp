// libFuzzer target for the CPER decoder (hipstack/cper.hpp): any bytes in, no crash, no read past
// them (ASan), and what comes out is consistent with them. Inputs whose first byte is odd spoil a
// well-formed ring (cper_builder.hpp) with the rest of the input instead of starting from nothing, so
// the fuzzer reaches the section and register decoding without having to find a valid header first.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <hipstack/cper.hpp>

#include "../cper_builder.hpp"

namespace {

void check(const std::vector<std::uint8_t>& bytes) {
  const hipstack::smi::CperScan scan = hipstack::smi::scan_cper(bytes);
  if (scan.records.size() > bytes.size() / 128) std::abort();  // every record holds a 128-byte header
  for (const hipstack::smi::CperRecord& r : scan.records) {
    if (r.raw.size() != r.length || r.length > bytes.size() || r.length < 128) std::abort();
    for (const hipstack::smi::CperSection& s : r.sections) {
      if (s.offset > r.length || s.length > r.length - s.offset) std::abort();
    }
  }
  for (const std::string& problem : scan.problems) {
    if (problem.rfind("record at byte ", 0) != 0 && problem.rfind("bytes ", 0) != 0) std::abort();
  }
  const hipstack::smi::CperDecoded one = hipstack::smi::decode_cper_record(bytes);
  if (one.record.has_value() == !one.error.empty()) std::abort();  // a record, or why not: never both
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::uint8_t> bytes(data, data + size);
  if (size > 0 && (data[0] & 1) != 0) {
    bytes = cper_test::ring({cper_test::fatal_record(), cper_test::corrected_record(), cper_test::threshold_record()});
    // The rest of the input as (offset, value) pairs written into the ring, then a new length.
    for (std::size_t i = 1; i + 2 < size; i += 3) bytes[(data[i] | data[i + 1] << 8) % bytes.size()] = data[i + 2];
    if (size % 7 == 0) bytes.resize(bytes.size() - (data[size - 1] % 200));
  }
  check(bytes);
  return 0;
}
