// CPER records built by tests from the UEFI specification's layouts (appendix N) and amdgpu's
// (amd_cper.h): a 128-byte header, 72-byte descriptors, AMD's section bodies. Tests and the fuzzer's
// seed corpus build records here rather than carrying bytes whose origin nobody can check.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <string_view>
#include <vector>

namespace cper_test {

using Bytes = std::vector<std::uint8_t>;

inline void put16(Bytes& b, std::size_t at, std::uint16_t v) {
  b[at] = static_cast<std::uint8_t>(v), b[at + 1] = static_cast<std::uint8_t>(v >> 8);
}
inline void put32(Bytes& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}
inline void put64(Bytes& b, std::size_t at, std::uint64_t v) {
  put32(b, at, static_cast<std::uint32_t>(v)), put32(b, at + 4, static_cast<std::uint32_t>(v >> 32));
}
inline void put_text(Bytes& b, std::size_t at, std::string_view text) { std::memcpy(b.data() + at, text.data(), text.size()); }

// Stored GUIDs (Data1..3 little-endian).
inline constexpr std::array<std::uint8_t, 16> kCrashdump = {0x78, 0x0C, 0xAC, 0x32, 0x23, 0x26, 0xF6, 0x48,
                                                            0xB0, 0xD0, 0x73, 0x65, 0x72, 0x5F, 0xD6, 0xAE};
inline constexpr std::array<std::uint8_t, 16> kNonstandard = {0x78, 0x0C, 0xAC, 0x32, 0x23, 0x26, 0xF6, 0x48,
                                                              0x81, 0xA2, 0xAC, 0x69, 0x17, 0x80, 0x55, 0x1D};
inline constexpr std::array<std::uint8_t, 16> kMce = {0xFE, 0x6F, 0xF5, 0xE8, 0x9C, 0x91, 0xC5, 0x4C,
                                                      0xBA, 0x88, 0x65, 0xAB, 0xE1, 0x49, 0x13, 0xBB};
inline constexpr std::array<std::uint8_t, 16> kCmc = {0xB1, 0x8B, 0xCE, 0x2D, 0xD7, 0xBD, 0x0E, 0x45,
                                                      0xB9, 0xAD, 0x9C, 0xF4, 0xEB, 0xD4, 0xF8, 0x90};

struct Bank {
  std::uint64_t status = 0, address = 0, ipid = 0, syndrome = 0;
};

struct Section {
  bool crashdump = true;  // else nonstandard
  std::uint32_t severity = 1;
  std::uint32_t flags = 0x1;  // primary
  Bank bank;
  std::string_view fru = "OAM0";
};

struct Time {
  std::uint8_t second = 21, minute = 3, hour = 14, day = 7, month = 12, year = 26, century = 20;
};

// A record as amdgpu writes one: binary UTC time, "amdgpu" creator, text ids.
inline Bytes record(std::uint32_t severity, const std::vector<Section>& sections, Time t = {}, bool corrected_notify = false) {
  std::size_t length = 128 + 72 * sections.size();
  std::vector<std::size_t> offsets;
  for (const Section& s : sections) {
    offsets.push_back(length);
    length += s.crashdump ? 176 : 272;
  }
  Bytes b(length, 0);
  put_text(b, 0, "CPER");
  put16(b, 4, 0x0100);
  put32(b, 6, 0xFFFFFFFF);
  put16(b, 10, static_cast<std::uint16_t>(sections.size()));
  put32(b, 12, severity);
  put32(b, 16, 0x3);  // platform id and timestamp valid
  put32(b, 20, static_cast<std::uint32_t>(length));
  const std::uint8_t stamp[8] = {t.second, t.minute, t.hour, 0, t.day, t.month, t.year, t.century};
  std::memcpy(b.data() + 24, stamp, 8);
  put_text(b, 32, "0x1002:0x74A1");
  put_text(b, 64, "amdgpu");
  std::memcpy(b.data() + 80, (corrected_notify ? kCmc : kMce).data(), 16);
  put_text(b, 96, "0:1");
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const Section& s = sections[i];
    const std::size_t d = 128 + 72 * i;
    put32(b, d, static_cast<std::uint32_t>(offsets[i]));
    put32(b, d + 4, s.crashdump ? 176 : 272);
    b[d + 8] = 0x01, b[d + 9] = 0x22;
    b[d + 10] = 0x02;  // FRU text valid
    put32(b, d + 12, s.flags);
    std::memcpy(b.data() + d + 16, (s.crashdump ? kCrashdump : kNonstandard).data(), 16);
    put32(b, d + 48, s.severity);
    put_text(b, d + 52, s.fru);
    const std::size_t body = offsets[i];
    if (s.crashdump) {
      put16(b, body + 128, 1), put16(b, body + 130, 32);
      put64(b, body + 144, s.bank.status), put64(b, body + 152, s.bank.address), put64(b, body + 160, s.bank.ipid);
      put64(b, body + 168, s.bank.syndrome);
    } else {
      put64(b, body, 0x104);
      std::memcpy(b.data() + body + 64, kNonstandard.data(), 16);
      put16(b, body + 128, 1), put16(b, body + 130, 128);
      put64(b, body + 144 + 8, s.bank.status), put64(b, body + 144 + 16, s.bank.address);
      put64(b, body + 144 + 40, s.bank.ipid), put64(b, body + 144 + 48, s.bank.syndrome);
    }
  }
  return b;
}

// amdgpu's three kinds: a fatal error (one crashdump section), corrected errors (nonstandard
// sections, CMC), bad pages past the threshold (severity 1, or 3 in early 6.15 kernels; flag 0x08).
inline Bytes fatal_record(Time t = {}) {
  return record(1, {Section{true, 1, 0x1, Bank{(1ULL << 63) | (1ULL << 61) | (1ULL << 57), 0x1000, 0x0096'0000'0000ULL, 0x5}}}, t);
}
inline Bytes corrected_record(Time t = {}) {
  return record(2, {Section{false, 2, 0x1, Bank{(1ULL << 63) | (1ULL << 46), 0x2000, 0x0096'0000'0000ULL, 0}, "OAM1"}}, t, true);
}
// An uncorrected error the hardware contained (UEFI's recoverable): a bank without PCC.
inline Bytes recoverable_record(Time t = {}) {
  return record(0, {Section{true, 0, 0x1, Bank{(1ULL << 63) | (1ULL << 61), 0x3000, 0x0096'0000'0000ULL, 0x7}}}, t);
}
inline Bytes threshold_record(std::uint32_t severity = 1, Time t = {}) {
  return record(severity, {Section{false, severity, 0x1 | 0x08, Bank{0xB0000000'00000137ULL, 0, 0x0096'0000'0000ULL, 0}}}, t);
}

// A record's timestamp for a moment given in seconds since the epoch (UTC, as amdgpu writes it).
inline Time time_of(std::time_t when) {
  std::tm tm{};
  gmtime_r(&when, &tm);
  const int year = tm.tm_year + 1900;
  return {static_cast<std::uint8_t>(tm.tm_sec), static_cast<std::uint8_t>(tm.tm_min), static_cast<std::uint8_t>(tm.tm_hour),
          static_cast<std::uint8_t>(tm.tm_mday), static_cast<std::uint8_t>(tm.tm_mon + 1), static_cast<std::uint8_t>(year % 100),
          static_cast<std::uint8_t>(year / 100)};
}

// The ring's debugfs file: three u32 pointers, then the records.
inline Bytes ring(const std::vector<Bytes>& records) {
  Bytes b(12, 0);
  for (const Bytes& r : records) b.insert(b.end(), r.begin(), r.end());
  put32(b, 4, static_cast<std::uint32_t>((b.size() - 12) / 4));
  return b;
}

}  // namespace cper_test
