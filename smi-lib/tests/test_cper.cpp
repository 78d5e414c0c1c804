// The CPER decoder (hipstack/cper.hpp) on records built from the specification's layouts
// (cper_builder.hpp): each amdgpu record kind decoded field by field, the ring's file, and malformed
// or truncated records named and skipped.
#include <gtest/gtest.h>
#include <hipstack/cper.hpp>

#include <chrono>
#include <string>

#include "cper_builder.hpp"

namespace smi = hipstack::smi;
using namespace cper_test;

namespace {

std::chrono::system_clock::time_point utc(int y, int mo, int d, int h, int mi, int s) {
  using namespace std::chrono;
  return sys_days{year{y} / month{static_cast<unsigned>(mo)} / day{static_cast<unsigned>(d)}} + hours{h} + minutes{mi} + seconds{s};
}

TEST(Cper, FatalRecordAsAmdgpuWritesIt) {
  const Bytes bytes = fatal_record();
  const smi::CperDecoded d = smi::decode_cper_record(bytes);
  ASSERT_TRUE(d.record) << d.error;
  const smi::CperRecord& r = *d.record;
  EXPECT_EQ(r.severity, smi::CperSeverity::fatal);
  EXPECT_EQ(r.length, 376U);  // 128 + 72 + 176, as amdgpu's fatal records are
  EXPECT_EQ(r.revision, 0x0100);
  EXPECT_EQ(r.creator_id, "amdgpu");
  EXPECT_EQ(r.platform_id, "0x1002:0x74A1");
  EXPECT_EQ(r.record_id, "0:1");
  EXPECT_EQ(r.notification, "MCE");
  EXPECT_EQ(r.time_text, "2026-12-07 14:03:21 UTC");
  ASSERT_TRUE(r.time);
  EXPECT_EQ(*r.time, utc(2026, 12, 7, 14, 3, 21));
  ASSERT_EQ(r.sections.size(), 1U);
  const smi::CperSection& s = r.sections[0];
  EXPECT_EQ(s.type, "crashdump");
  EXPECT_EQ(s.severity, smi::CperSeverity::fatal);
  EXPECT_EQ(s.fru_text, "OAM0");
  ASSERT_TRUE(s.bank);
  EXPECT_EQ(s.bank->address, 0x1000U);
  EXPECT_EQ(s.bank->syndrome, 0x5U);
  EXPECT_EQ(s.error_type, "fatal");
  EXPECT_EQ(s.block, "UMC (memory controller)");
  EXPECT_FALSE(s.afid);
  EXPECT_EQ(r.raw, bytes);
  EXPECT_EQ(smi::cper_action(r), smi::ErrorAction::reset_gpu);
}

TEST(Cper, CorrectedAndThresholdRecords) {
  const smi::CperDecoded corrected = smi::decode_cper_record(corrected_record());
  ASSERT_TRUE(corrected.record) << corrected.error;
  EXPECT_EQ(corrected.record->length, 472U);  // 128 + 344: one nonstandard section
  EXPECT_EQ(corrected.record->notification, "CMC");
  EXPECT_EQ(corrected.record->sections[0].type, "nonstandard");
  EXPECT_EQ(corrected.record->sections[0].error_type, "corrected");
  EXPECT_EQ(corrected.record->sections[0].fru_text, "OAM1");
  EXPECT_EQ(corrected.record->sections[0].bank->address, 0x2000U);
  EXPECT_EQ(smi::cper_action(*corrected.record), smi::ErrorAction::none);
  // Bad pages past the threshold: severity 1, or 3 as early 6.15 kernels wrote it; AFID 19.
  for (const std::uint32_t severity : {1U, 3U}) {
    const smi::CperDecoded t = smi::decode_cper_record(threshold_record(severity));
    ASSERT_TRUE(t.record) << t.error;
    EXPECT_EQ(t.record->sections[0].error_type, "bad page retirement threshold");
    EXPECT_EQ(t.record->sections[0].afid, 19U);
    EXPECT_EQ(smi::cper_action(*t.record), smi::ErrorAction::contact_support);
  }
  // A deferred (recoverable) record: the application that meets the poisoned data restarts.
  const smi::CperDecoded deferred = smi::decode_cper_record(record(0, {Section{false, 0, 0x1 | 0x10, Bank{1ULL << 44}}}));
  ASSERT_TRUE(deferred.record) << deferred.error;
  EXPECT_EQ(deferred.record->sections[0].error_type, "uncorrected, non-fatal (deferred)");
  EXPECT_EQ(smi::cper_action(*deferred.record), smi::ErrorAction::restart_app);
}

TEST(Cper, TimestampsOfEitherCenturyAndOfOtherWriters) {
  Time later;
  later.century = 21;  // later kernels: "the 21st century"
  EXPECT_EQ(*smi::decode_cper_record(fatal_record(later)).record->time, utc(2026, 12, 7, 14, 3, 21));
  Time bad;
  bad.month = 13;
  const auto r = smi::decode_cper_record(fatal_record(bad));
  ASSERT_TRUE(r.record) << "a bad date leaves the record readable";
  EXPECT_FALSE(r.record->time);
  EXPECT_NE(r.record->time_text.find("not a date"), std::string::npos) << r.record->time_text;
  // A century no clock can hold (the fuzzer's find: 255 * 100 years overflowed the instant).
  Time far;
  far.century = 255;
  const auto distant = smi::decode_cper_record(fatal_record(far));
  ASSERT_TRUE(distant.record);
  EXPECT_FALSE(distant.record->time);
  EXPECT_NE(distant.record->time_text.find("not a date"), std::string::npos) << distant.record->time_text;
  // Another creator: BCD, the writer's local time, shown but not made an instant.
  Bytes other = fatal_record(Time{0x21, 0x03, 0x14, 0x07, 0x12, 0x26, 0x20});
  put_text(other, 64, std::string(16, '\0'));
  other[64] = 0x11;  // a GUID, not text
  const auto bcd = smi::decode_cper_record(other);
  ASSERT_TRUE(bcd.record) << bcd.error;
  EXPECT_EQ(bcd.record->time_text, "2026-12-07 14:03:21 (local time of the writer)");
  EXPECT_FALSE(bcd.record->time);
  EXPECT_EQ(bcd.record->creator_id, "0x11000000000000000000000000000000");
}

TEST(Cper, RingFileAndConcatenatedRecords) {
  const Bytes file = ring({fatal_record(), corrected_record(), threshold_record()});
  const smi::CperScan scan = smi::scan_cper(file);
  EXPECT_TRUE(scan.problems.empty()) << scan.problems.front();
  ASSERT_EQ(scan.records.size(), 3U);
  EXPECT_EQ(scan.records[0].severity, smi::CperSeverity::fatal);
  EXPECT_EQ(scan.records[1].severity, smi::CperSeverity::corrected);
  EXPECT_EQ(scan.records[2].sections[0].afid, 19U);
  Bytes saved = fatal_record();
  const Bytes second = corrected_record();
  saved.insert(saved.end(), second.begin(), second.end());
  EXPECT_EQ(smi::scan_cper(saved).records.size(), 2U);
  EXPECT_EQ(smi::scan_cper(file, 2).records.size(), 2U);
  EXPECT_TRUE(smi::scan_cper(file, 2).truncated);
  EXPECT_TRUE(smi::scan_cper(Bytes(12, 0)).records.empty());
  EXPECT_TRUE(smi::scan_cper(Bytes(12, 0)).problems.empty()) << "an empty ring is no problem";
  // An empty ring whose pointers are where the driver writes next: no record, and no problem.
  Bytes empty = ring({});
  put32(empty, 0, 0x2A0), put32(empty, 4, 0x2A0), put32(empty, 8, 0x2A0);
  const smi::CperScan none = smi::scan_cper(empty);
  EXPECT_TRUE(none.records.empty());
  EXPECT_TRUE(none.problems.empty()) << none.problems.front();
}

// Each way a record can be wrong is named with where, and the scan goes on to the next record.
TEST(Cper, MalformedRecordsAreNamedAndSkipped) {
  struct Case {
    const char* what;
    void (*spoil)(Bytes&);
    const char* error;
  };
  const Case cases[] = {
      {"signature end", [](Bytes& b) { put32(b, 6, 0); }, "at byte 6: signature end 0x00000000"},
      {"severity", [](Bytes& b) { put32(b, 12, 7); }, "at byte 12: error severity 7"},
      {"length too small", [](Bytes& b) { put32(b, 20, 150); }, "at byte 20: record length 150"},
      {"length past the data", [](Bytes& b) { put32(b, 20, 4000); }, "truncated: the record says 4000 bytes"},
      {"huge length", [](Bytes& b) { put32(b, 20, 0xFFFFFFF0); }, "at byte 20: record length 4294967280"},
      {"section outside", [](Bytes& b) { put32(b, 128, 360); }, "at byte 128: section 0 at offset 360 length 176"},
      {"section overflow", [](Bytes& b) { put32(b, 132, 0xFFFFFFFF); }, "at byte 128: section 0"},
      {"section count", [](Bytes& b) { put16(b, 10, 60000); }, "record length 376 does not hold the header and 60000"},
      {"section severity", [](Bytes& b) { put32(b, 128 + 48, 9); }, "at byte 176: section 0 severity 9"},
  };
  for (const Case& c : cases) {
    Bytes bad = fatal_record();
    c.spoil(bad);
    const smi::CperDecoded d = smi::decode_cper_record(bad);
    EXPECT_FALSE(d.record) << c.what;
    EXPECT_NE(d.error.find(c.error), std::string::npos) << c.what << ": " << d.error;
    const smi::CperScan scan = smi::scan_cper(ring({bad, corrected_record()}));
    ASSERT_EQ(scan.records.size(), 1U) << c.what << ": the good record after the bad one is still read";
    EXPECT_EQ(scan.records[0].severity, smi::CperSeverity::corrected) << c.what;
    ASSERT_EQ(scan.problems.size(), 1U) << c.what << ": one bad record, one problem named";
    EXPECT_NE(scan.problems[0].find("record at byte 12: "), std::string::npos) << scan.problems[0];
  }
  // Truncated anywhere: never a record, never a read past the end (ASan watches).
  const Bytes whole = fatal_record();
  for (std::size_t size = 0; size < whole.size(); ++size) {
    EXPECT_FALSE(smi::decode_cper_record(std::span(whole).first(size)).record) << size;
    EXPECT_TRUE(smi::scan_cper(std::span(whole).first(size)).records.empty()) << size;
  }
  // A file of many bad records: 64 named, the rest counted in one line, never a list as long as the file.
  Bytes many;
  for (int i = 0; i < 200; ++i) {
    Bytes bad = fatal_record();
    put32(bad, 12, 9);
    many.insert(many.end(), bad.begin(), bad.end());
  }
  const smi::CperScan flood = smi::scan_cper(many);
  ASSERT_EQ(flood.problems.size(), 65U);
  // The 65th bad record starts at 64 * 376; the last at 199 * 376 (its signature: 4 bytes).
  EXPECT_EQ(flood.problems.back(), "bytes 24064-74827: 136 more problems past the first 64, not named one by one");
  // Bytes that are no record at all are named as such.
  const smi::CperScan junk = smi::scan_cper(Bytes{'n', 'o', 'p', 'e', 'j', 'u', 'n', 'k'});
  ASSERT_EQ(junk.problems.size(), 1U);
  EXPECT_EQ(junk.problems[0], "bytes 0-7: no record (no \"CPER\" signature)");
}

TEST(Cper, HostileTextIsKeptAsData) {
  Bytes b = fatal_record();
  put_text(b, 96, "\x1b[2J\\x");
  put_text(b, 128 + 52, "OAM\n0\x7f");
  const auto d = smi::decode_cper_record(b);
  ASSERT_TRUE(d.record) << d.error;
  EXPECT_EQ(d.record->record_id, "0x1b5b324a5c780000") << "an id with control bytes is shown as hex";
  EXPECT_EQ(d.record->sections[0].fru_text, "OAM\\x0a0\\x7f");
}

TEST(Cper, SeverityNames) {
  for (const auto s : {smi::CperSeverity::recoverable, smi::CperSeverity::fatal, smi::CperSeverity::corrected,
                       smi::CperSeverity::informational}) {
    EXPECT_EQ(smi::find_cper_severity(smi::cper_severity_name(s)), s);
  }
  EXPECT_FALSE(smi::find_cper_severity("nonfatal"));
}

}  // namespace
