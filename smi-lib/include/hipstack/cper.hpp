// hipstack/cper.hpp: UEFI Common Platform Error Records (CPER) as AMD GPUs report them
// (docs/errors.md, "AMD: CPER records").
//
// A record is a 128-byte header, one 72-byte descriptor per section, then the sections (UEFI
// specification, appendix N). The amdgpu driver (Linux 6.15 and later, amdgpu_cper.c) writes one per
// fatal error, one per batch of corrected or deferred errors and one when bad pages pass their
// threshold, into a ring that debugfs shows as dri/<minor>/amdgpu_ring_cper: a 12-byte prefix (read
// and write pointers), then whole records, oldest first. Its sections are AMD's: "crashdump" (a
// fatal error's ACA bank: status, address, IPID, syndrome) and "nonstandard" (a processor-error
// section carrying a register dump of the bank). The decoder keeps each record's bytes, names what
// it cannot read (where and why) and never reads past what it was given.
#pragma once

#include <hipstack/gpu_errors.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace hipstack::smi {

// The header's and each section's error severity (UEFI's values).
enum class CperSeverity : std::uint8_t { recoverable = 0, fatal = 1, corrected = 2, informational = 3 };

// AMD's section of an error bank's registers (ACA: status, address, IPID, syndrome).
struct CperBank {
  std::uint64_t status = 0, address = 0, ipid = 0, syndrome = 0;
};

struct CperSection {
  std::uint32_t offset = 0;  // from the start of the record
  std::uint32_t length = 0;
  std::uint32_t flags = 0;   // the descriptor's flags (primary, threshold exceeded, AMD's latent bit, ...)
  std::array<std::uint8_t, 16> type_guid{};
  std::string type;          // "crashdump", "nonstandard", "processor", or the GUID as text
  CperSeverity severity = CperSeverity::informational;
  std::string fru_text;      // "OAM0": the GPU's socket on the board
  std::optional<CperBank> bank;  // AMD's sections: the bank's registers
  // What the bank's status bits say (AMD's ACA rules): "fatal", "uncorrected, non-fatal",
  // "corrected", or "bad page retirement threshold" when the threshold flag is set; "" when no bank.
  std::string error_type;
  std::string block;         // "UMC (memory controller)" from the IPID's hardware id where known, else "hardware id 0x..."
  std::optional<std::uint32_t> afid;  // AMD Field ID where the section alone decides it (docs/errors.md)
};

struct CperRecord {
  std::uint16_t revision = 0;
  CperSeverity severity = CperSeverity::informational;
  std::uint32_t length = 0;
  // When the error was recorded: amdgpu writes UTC in binary fields, the specification local time in
  // BCD; none when the timestamp is not valid or not a date.
  std::optional<std::chrono::system_clock::time_point> time;
  std::string time_text;     // "2026-12-07 14:03:21" as recorded, or why there is none
  std::string platform_id;   // amdgpu: "0x1002:0x74A2" (vendor:device)
  std::string creator_id;    // "amdgpu"
  std::string record_id;     // amdgpu: "socket:counter"
  std::string notification;  // "MCE", "CMC", "BOOT", ... or the GUID as text
  std::uint32_t flags = 0;
  std::vector<CperSection> sections;
  std::vector<std::uint8_t> raw;  // the record's bytes, exactly
};

// One record at the start of `bytes`, or why it is not one ("at byte N: ...").
struct CperDecoded {
  std::optional<CperRecord> record;
  std::string error;
};
HIPSTACK_SMI_CXX_API CperDecoded decode_cper_record(std::span<const std::uint8_t> bytes);

// Every record in a buffer: a saved record, records saved one after another, or the ring's debugfs
// file (its 12-byte prefix skipped). A malformed or truncated record is named in `problems` (the
// first 64 one by one, the rest counted in one last line) and skipped: the scan goes on at the next "CPER" signature (records start on 4-byte boundaries). At
// most `max_records` (the driver's ring holds at most 0x1000).
struct CperScan {
  std::vector<CperRecord> records;
  std::vector<std::string> problems;
  bool truncated = false;  // max_records reached with bytes left
};
inline constexpr std::size_t kCperMaxRecords = 0x1000;
HIPSTACK_SMI_CXX_API CperScan scan_cper(std::span<const std::uint8_t> bytes, std::size_t max_records = kCperMaxRecords);

// The records one GPU's driver holds (System::cper_ring): where they were read, or why none could be.
struct CperRing {
  std::string source;       // the file read ("/sys/kernel/debug/dri/0/amdgpu_ring_cper" in the root view)
  std::string unavailable;  // why there is nothing to read: not an AMD GPU, no debugfs, no permission, a kernel
                            // without CPER (before 6.15); "" when the ring was read
  CperScan scan;            // the records, oldest first, and the problems met
};

// "recoverable", "fatal", "corrected", "informational" (amd-smi's words: non-fatal uncorrected,
// fatal, non-fatal corrected).
HIPSTACK_SMI_CXX_API std::string_view cper_severity_name(CperSeverity severity) noexcept;
HIPSTACK_SMI_CXX_API std::optional<CperSeverity> find_cper_severity(std::string_view name) noexcept;
// What to do about a record (docs/errors.md): bad pages past their threshold are a case for the
// vendor (contact_support: the GPU ran out of spare memory), a fatal record resets the GPU, a
// recoverable (deferred, poisoned) one restarts the application that met it, a corrected one nothing.
HIPSTACK_SMI_CXX_API ErrorAction cper_action(const CperRecord& record) noexcept;
// One section in words: "crashdump OAM0: fatal, UMC (memory controller), address 0x1000, AFID 19".
HIPSTACK_SMI_CXX_API std::string cper_section_summary(const CperSection& section);
// The record as an error for health (recent_errors_finding): its time (`seen` when it has none), its
// severity as the code, its action, "fatal: " and its sections in words.
HIPSTACK_SMI_CXX_API ErrorOccurrence cper_occurrence(const CperRecord& record, std::chrono::system_clock::time_point seen);

}  // namespace hipstack::smi
