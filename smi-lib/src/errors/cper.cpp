// Decoding UEFI CPER records as the amdgpu driver writes them (hipstack/cper.hpp, docs/errors.md).
// Layouts from the UEFI specification (appendix N: a 128-byte record header, 72-byte section
// descriptors) and the kernel's amd_cper.h / amdgpu_cper.c (AMD's section types, the fields amdgpu
// fills with text, binary UTC timestamps, the register dump's place). Every read is bounds-checked
// against the bytes given; anything that does not fit is named with its offset.
#include <hipstack/cper.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <ctime>

namespace hipstack::smi {
namespace {

constexpr std::size_t kHeaderSize = 128;
constexpr std::size_t kDescriptorSize = 72;
constexpr std::size_t kRingPrefix = 12;  // the debugfs file: read, write and driver write pointers
constexpr std::uint32_t kSignatureEnd = 0xFFFFFFFF;
// Records no larger than the driver's ring (4 MiB): a length past it is not a record.
constexpr std::uint32_t kMaxRecordLength = 4U << 20;
constexpr std::size_t kMaxProblems = 64;

// Header fields (UEFI N.2.1).
constexpr std::size_t kRevision = 4, kSigEnd = 6, kSectionCount = 10, kSeverity = 12, kValidation = 16, kLength = 20,
                      kTimestamp = 24, kPlatformId = 32, kCreatorId = 64, kNotification = 80, kRecordId = 96,
                      kFlags = 104;
// Section descriptor fields (UEFI N.2.2).
constexpr std::size_t kSecOffset = 0, kSecLength = 4, kSecFlags = 12, kSecType = 16, kSecSeverity = 48, kSecFruText = 52;
constexpr std::uint32_t kValidTimestamp = 0x2;
constexpr std::uint32_t kFlagThresholdExceeded = 0x08;

using Guid = std::array<std::uint8_t, 16>;

// GUIDs as stored (Data1..3 little-endian, then 8 bytes as written).
constexpr Guid guid(std::uint32_t a, std::uint16_t b, std::uint16_t c, std::array<std::uint8_t, 8> d) {
  return {static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(a >> 8), static_cast<std::uint8_t>(a >> 16),
          static_cast<std::uint8_t>(a >> 24), static_cast<std::uint8_t>(b), static_cast<std::uint8_t>(b >> 8),
          static_cast<std::uint8_t>(c), static_cast<std::uint8_t>(c >> 8), d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]};
}

struct NamedGuid {
  Guid value;
  std::string_view name;
};
// AMD's section types (amd_cper.h) and the UEFI processor section amd-smi reads like them.
constexpr NamedGuid kSectionTypes[] = {
    {guid(0x32AC0C78, 0x2623, 0x48F6, {0xB0, 0xD0, 0x73, 0x65, 0x72, 0x5F, 0xD6, 0xAE}), "crashdump"},
    {guid(0x32AC0C78, 0x2623, 0x48F6, {0x81, 0xA2, 0xAC, 0x69, 0x17, 0x80, 0x55, 0x1D}), "nonstandard"},
    {guid(0xDC3EA0B0, 0xA144, 0x4797, {0xB9, 0x5B, 0x53, 0xFA, 0x24, 0x2B, 0x6E, 0x1D}), "processor"},
};
// Notification types (UEFI N.2.1.1) amdgpu uses: MCE for fatal and threshold records, CMC for
// corrected ones, BOOT for boot-time errors.
constexpr NamedGuid kNotifications[] = {
    {guid(0xE8F56FFE, 0x919C, 0x4CC5, {0xBA, 0x88, 0x65, 0xAB, 0xE1, 0x49, 0x13, 0xBB}), "MCE"},
    {guid(0x2DCE8BB1, 0xBDD7, 0x450E, {0xB9, 0xAD, 0x9C, 0xF4, 0xEB, 0xD4, 0xF8, 0x90}), "CMC"},
    {guid(0x3D61A466, 0xAB40, 0x409A, {0xA6, 0x98, 0xF3, 0x62, 0xD4, 0x64, 0xB3, 0x8F}), "BOOT"},
};

std::uint16_t u16(std::span<const std::uint8_t> b, std::size_t at) {
  return static_cast<std::uint16_t>(b[at] | b[at + 1] << 8);
}
std::uint32_t u32(std::span<const std::uint8_t> b, std::size_t at) {
  return static_cast<std::uint32_t>(b[at]) | static_cast<std::uint32_t>(b[at + 1]) << 8 |
         static_cast<std::uint32_t>(b[at + 2]) << 16 | static_cast<std::uint32_t>(b[at + 3]) << 24;
}
std::uint64_t u64(std::span<const std::uint8_t> b, std::size_t at) {
  return static_cast<std::uint64_t>(u32(b, at)) | static_cast<std::uint64_t>(u32(b, at + 4)) << 32;
}
Guid guid_at(std::span<const std::uint8_t> b, std::size_t at) {
  Guid g{};
  std::copy_n(b.begin() + static_cast<std::ptrdiff_t>(at), g.size(), g.begin());
  return g;
}

std::string guid_text(const Guid& g) {
  return fmt::format("{:08X}-{:04X}-{:04X}-{:02X}{:02X}-{:02X}{:02X}{:02X}{:02X}{:02X}{:02X}", u32(g, 0), u16(g, 4), u16(g, 6),
                     g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
}

std::string guid_name(const Guid& g, std::span<const NamedGuid> known) {
  for (const NamedGuid& k : known) {
    if (k.value == g) return std::string(k.name);
  }
  return guid_text(g);
}

// A field amdgpu fills with text (platform, creator and record ids, FRU text): up to the first NUL,
// printable ASCII kept, anything else as \xNN so that hostile bytes print as data.
std::string ascii_field(std::span<const std::uint8_t> b, std::size_t at, std::size_t size) {
  std::string out;
  for (std::size_t i = at; i < at + size && b[i] != 0; ++i) {
    const auto c = static_cast<char>(b[i]);
    if (b[i] >= 0x20 && b[i] < 0x7F && c != '\\') out += c;
    else out += fmt::format("\\x{:02x}", b[i]);
  }
  return out;
}

bool all_zero(std::span<const std::uint8_t> b, std::size_t at, std::size_t size) {
  return std::all_of(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + size),
                     [](std::uint8_t x) { return x == 0; });
}

// A field that is text where amdgpu wrote text, else the bytes in hex (another creator's GUID or
// number); "" when all zero.
std::string id_field(std::span<const std::uint8_t> b, std::size_t at, std::size_t size) {
  if (all_zero(b, at, size)) return "";
  bool text = b[at] >= 0x20 && b[at] < 0x7F;
  for (std::size_t i = at; text && i < at + size && b[i] != 0; ++i) text = b[i] >= 0x20 && b[i] < 0x7F;
  if (text) return ascii_field(b, at, size);
  std::string hex = "0x";
  for (std::size_t i = at; i < at + size; ++i) hex += fmt::format("{:02x}", b[i]);
  return hex;
}

int from_bcd(std::uint8_t v) { return (v >> 4) * 10 + (v & 0x0F); }
bool is_bcd(std::uint8_t v) { return (v >> 4) < 10 && (v & 0x0F) < 10; }

// The timestamp (UEFI N.2.1: seconds, minutes, hours, flags, day, month, year, century). amdgpu
// writes binary values in UTC (amdgpu_cper_get_timestamp; century 20, or 21 in later kernels, both
// meaning 20xx); the specification says BCD in local time, which any other creator gets.
void decode_time(std::span<const std::uint8_t> b, bool amdgpu, CperRecord& r) {
  const std::uint8_t* t = b.data() + kTimestamp;
  int second = t[0], minute = t[1], hour = t[2], day = t[4], month = t[5], year = t[6], century = t[7];
  if (!amdgpu) {
    for (const int i : {0, 1, 2, 4, 5, 6, 7}) {
      if (!is_bcd(t[i])) {
        r.time_text = fmt::format("not a date: byte {} of the timestamp (0x{:02x}) is not BCD", kTimestamp + i, t[i]);
        return;
      }
    }
    second = from_bcd(t[0]), minute = from_bcd(t[1]), hour = from_bcd(t[2]), day = from_bcd(t[4]), month = from_bcd(t[5]);
    year = from_bcd(t[6]), century = from_bcd(t[7]);
  }
  int full_year = century * 100 + year;
  if (amdgpu && century == 21) full_year = 2000 + year;  // "the 21st century", as later kernels write it
  // Years outside 1970-2199 are no GPU's record (and past 2262 no system_clock instant).
  if (year > 99 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60 ||
      full_year < 1970 || full_year > 2199) {
    r.time_text = fmt::format("not a date: {:02}-{:02}-{:02} {:02}:{:02}:{:02} (century {})", year, month, day, hour, minute,
                              second, century);
    return;
  }
  r.time_text = fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}{}", full_year, month, day, hour, minute, second,
                            amdgpu ? " UTC" : " (local time of the writer)");
  if (!amdgpu) return;  // a local time of another machine: shown, not turned into an instant
  std::tm tm{};
  tm.tm_year = full_year - 1900, tm.tm_mon = month - 1, tm.tm_mday = day, tm.tm_hour = hour, tm.tm_min = minute;
  tm.tm_sec = second;
  r.time = std::chrono::system_clock::from_time_t(timegm(&tm));
}

// What an ACA bank's status says (amd-smi's rules on the MCA status bits: poison 43, deferred 44,
// pcc 57, uc 61; tcc 55), or the bad-page threshold where the section's flag says so.
std::string bank_error_type(std::uint64_t status, std::uint32_t section_flags) {
  const auto bit = [status](int n) { return ((status >> n) & 1U) != 0; };
  if ((section_flags & kFlagThresholdExceeded) != 0) return "bad page retirement threshold";
  if (bit(43)) return "uncorrected, non-fatal (poison)";
  if (bit(57)) return "fatal";
  if (bit(61)) return bit(55) ? "fatal" : "uncorrected, non-fatal";
  if (bit(44)) return "uncorrected, non-fatal (deferred)";
  return "corrected";
}

// The bank's block from the IPID's hardware id (bits 32-43) and ACA type (bits 48-63). Only the
// memory controller is named (amdgpu's MCA_UMC_HWID 0x96, type 0): other ids are printed as read.
std::string bank_block(std::uint64_t ipid) {
  const auto hardware_id = static_cast<unsigned>((ipid >> 32) & 0xFFF);
  const auto aca_type = static_cast<unsigned>(ipid >> 48);
  if (hardware_id == 0x96 && aca_type == 0) return "UMC (memory controller)";
  return fmt::format("hardware id 0x{:x}, ACA type 0x{:x}", hardware_id, aca_type);
}

// AMD's sections: where the bank's registers are (amd_cper.h). crashdump: status, address, IPID,
// syndrome as four u64 at 144; nonstandard and processor: a u32[32] register dump at 144 whose
// 64-bit registers are status 2-3, address 4-5, IPID 10-11, syndrome 12-13.
std::optional<CperBank> read_bank(std::span<const std::uint8_t> body, std::string_view type) {
  constexpr std::size_t kRegisters = 144;
  if (type == "crashdump" && body.size() >= kRegisters + 32) {
    return CperBank{u64(body, kRegisters), u64(body, kRegisters + 8), u64(body, kRegisters + 16), u64(body, kRegisters + 24)};
  }
  if ((type == "nonstandard" || type == "processor") && body.size() >= kRegisters + 128) {
    return CperBank{u64(body, kRegisters + 8), u64(body, kRegisters + 16), u64(body, kRegisters + 40), u64(body, kRegisters + 48)};
  }
  return std::nullopt;
}

// The AMD Field ID where the section alone decides it (amd-smi's AFID table, version 0.7): only the
// bad-page threshold (19, "HBM Errors / Bad Page Retirement Threshold / Fatal"). The others need
// AMD's bank and error-type tables, which hipstack does not carry: none is guessed.
std::optional<std::uint32_t> section_afid(const CperSection& s) {
  if (s.bank && (s.flags & kFlagThresholdExceeded) != 0) return 19;
  return std::nullopt;
}

std::optional<CperSeverity> severity_of(std::uint32_t value) {
  return value <= 3 ? std::optional(static_cast<CperSeverity>(value)) : std::nullopt;
}

CperDecoded fail(std::string error) { return {std::nullopt, std::move(error)}; }

}  // namespace

CperDecoded decode_cper_record(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < kHeaderSize) return fail(fmt::format("truncated: {} bytes, a record header is {}", bytes.size(), kHeaderSize));
  if (std::memcmp(bytes.data(), "CPER", 4) != 0) return fail("at byte 0: no \"CPER\" signature");
  if (u32(bytes, kSigEnd) != kSignatureEnd) {
    return fail(fmt::format("at byte {}: signature end 0x{:08x}, not 0xffffffff", kSigEnd, u32(bytes, kSigEnd)));
  }
  CperRecord r;
  r.revision = u16(bytes, kRevision);
  const auto severity = severity_of(u32(bytes, kSeverity));
  if (!severity) return fail(fmt::format("at byte {}: error severity {} (UEFI defines 0-3)", kSeverity, u32(bytes, kSeverity)));
  r.severity = *severity;
  r.length = u32(bytes, kLength);
  const std::size_t sections = u16(bytes, kSectionCount);
  if (r.length < kHeaderSize + sections * kDescriptorSize || r.length > kMaxRecordLength) {
    return fail(fmt::format("at byte {}: record length {} does not hold the header and {} section descriptors", kLength,
                            r.length, sections));
  }
  if (r.length > bytes.size()) return fail(fmt::format("truncated: the record says {} bytes, {} are there", r.length, bytes.size()));
  const auto record = bytes.first(r.length);
  r.creator_id = id_field(record, kCreatorId, 16);
  const bool amdgpu = r.creator_id == "amdgpu";
  if ((u32(record, kValidation) & kValidTimestamp) != 0) decode_time(record, amdgpu, r);
  else r.time_text = "no timestamp (its validation bit is clear)";
  r.platform_id = id_field(record, kPlatformId, 16);
  r.notification = all_zero(record, kNotification, 16) ? "" : guid_name(guid_at(record, kNotification), kNotifications);
  r.record_id = id_field(record, kRecordId, 8);
  r.flags = u32(record, kFlags);
  for (std::size_t i = 0; i < sections; ++i) {
    const std::size_t at = kHeaderSize + i * kDescriptorSize;
    CperSection s;
    s.offset = u32(record, at + kSecOffset);
    s.length = u32(record, at + kSecLength);
    if (s.offset < kHeaderSize + sections * kDescriptorSize || s.offset > r.length || s.length > r.length - s.offset) {
      return fail(fmt::format("at byte {}: section {} at offset {} length {} is not inside the record's {} bytes", at, i, s.offset,
                              s.length, r.length));
    }
    s.flags = u32(record, at + kSecFlags);
    s.type_guid = guid_at(record, at + kSecType);
    s.type = guid_name(s.type_guid, kSectionTypes);
    const auto section_severity = severity_of(u32(record, at + kSecSeverity));
    if (!section_severity) {
      return fail(fmt::format("at byte {}: section {} severity {} (UEFI defines 0-3)", at + kSecSeverity, i,
                              u32(record, at + kSecSeverity)));
    }
    s.severity = *section_severity;
    s.fru_text = ascii_field(record, at + kSecFruText, 20);
    s.bank = read_bank(record.subspan(s.offset, s.length), s.type);
    if (s.bank) {
      s.error_type = bank_error_type(s.bank->status, s.flags);
      s.block = bank_block(s.bank->ipid);
    }
    s.afid = section_afid(s);
    r.sections.push_back(std::move(s));
  }
  r.raw.assign(record.begin(), record.end());
  return {std::move(r), ""};
}

CperScan scan_cper(std::span<const std::uint8_t> bytes, std::size_t max_records) {
  CperScan scan;
  std::size_t at = 0;
  // The ring's debugfs file: 12 bytes of pointers before the first record, or alone when the ring
  // is empty (its pointers need not be 0 then: they are where the driver will write next).
  const bool starts_with_record = bytes.size() >= 4 && std::memcmp(bytes.data(), "CPER", 4) == 0;
  if (!starts_with_record && (bytes.size() == kRingPrefix ||
                              (bytes.size() >= kRingPrefix + 4 && std::memcmp(bytes.data() + kRingPrefix, "CPER", 4) == 0))) {
    at = kRingPrefix;
  }
  std::size_t skipped_from = SIZE_MAX;  // the first byte of a run that held no record
  bool after_bad_record = false;        // the bytes after a record named bad are its own: not named again
  // At most kMaxProblems named one by one (a hostile file of bad records would otherwise make a
  // list as long as itself); the rest counted in one line with the bytes they lie in.
  std::size_t more = 0, more_from = 0, more_to = 0;
  const auto problem = [&](std::size_t from, std::size_t to, std::string text) {
    if (scan.problems.size() < kMaxProblems) {
      scan.problems.push_back(std::move(text));
      return;
    }
    if (more++ == 0) more_from = from;
    more_to = to;
  };
  const auto flush_skipped = [&](std::size_t upto) {
    if (skipped_from != SIZE_MAX && upto > skipped_from) {
      problem(skipped_from, upto - 1, fmt::format("bytes {}-{}: no record (no \"CPER\" signature)", skipped_from, upto - 1));
    }
    skipped_from = SIZE_MAX;
  };
  while (at + 4 <= bytes.size()) {
    if (std::memcmp(bytes.data() + at, "CPER", 4) != 0) {
      if (skipped_from == SIZE_MAX && !after_bad_record && !all_zero(bytes, at, std::min<std::size_t>(4, bytes.size() - at))) {
        skipped_from = at;
      }
      at += 4;
      continue;
    }
    flush_skipped(at);
    after_bad_record = false;
    if (scan.records.size() >= max_records) {
      scan.truncated = true;
      break;
    }
    CperDecoded one = decode_cper_record(bytes.subspan(at));
    if (!one.record) {
      problem(at, at + 3, fmt::format("record at byte {}: {}", at, one.error));
      after_bad_record = true;
      at += 4;  // the next record starts on a later 4-byte boundary
      continue;
    }
    const std::size_t length = one.record->length;
    scan.records.push_back(std::move(*one.record));
    at += (length + 3) & ~std::size_t{3};
  }
  flush_skipped(std::min(at, bytes.size()));
  if (more > 0) {
    scan.problems.push_back(fmt::format("bytes {}-{}: {} more problems past the first {}, not named one by one", more_from, more_to,
                                        more, kMaxProblems));
  }
  return scan;
}

std::string_view cper_severity_name(CperSeverity severity) noexcept {
  switch (severity) {
    case CperSeverity::recoverable: return "recoverable";
    case CperSeverity::fatal: return "fatal";
    case CperSeverity::corrected: return "corrected";
    case CperSeverity::informational: return "informational";
  }
  return "informational";
}

std::optional<CperSeverity> find_cper_severity(std::string_view name) noexcept {
  for (const CperSeverity s : {CperSeverity::recoverable, CperSeverity::fatal, CperSeverity::corrected, CperSeverity::informational}) {
    if (cper_severity_name(s) == name) return s;
  }
  return std::nullopt;
}

ErrorAction cper_action(const CperRecord& record) noexcept {
  const bool threshold = std::any_of(record.sections.begin(), record.sections.end(),
                                     [](const CperSection& s) { return (s.flags & kFlagThresholdExceeded) != 0; });
  if (threshold) return ErrorAction::contact_support;  // the GPU ran out of spare memory: an RMA case
  switch (record.severity) {
    case CperSeverity::fatal: return ErrorAction::reset_gpu;
    case CperSeverity::recoverable: return ErrorAction::restart_app;
    case CperSeverity::corrected:
    case CperSeverity::informational: return ErrorAction::none;
  }
  return ErrorAction::unknown;
}

std::string cper_section_summary(const CperSection& s) {
  std::string line = fmt::format("{} {}", s.type, s.fru_text.empty() ? "-" : s.fru_text);
  if (!s.error_type.empty()) line += fmt::format(": {}, {}", s.error_type, s.block);
  if (s.bank && s.bank->address != 0) line += fmt::format(", address 0x{:x}", s.bank->address);
  if (s.afid) line += fmt::format(", AFID {}", *s.afid);
  return line;
}

ErrorOccurrence cper_occurrence(const CperRecord& record, std::chrono::system_clock::time_point seen) {
  std::string summary(cper_severity_name(record.severity));
  for (std::size_t i = 0; i < record.sections.size(); ++i) {
    summary += (i == 0 ? ": " : "; ") + cper_section_summary(record.sections[i]);
  }
  return {record.time.value_or(seen), ErrorSource::cper, static_cast<std::uint32_t>(record.severity), cper_action(record),
          "CPER " + summary};
}

}  // namespace hipstack::smi
