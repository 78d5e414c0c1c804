// The library's values as hipstack.monitor.v1 messages and back: the one place both directions are
// written, so the daemon's answers and hipstack-smi's reading of them cannot drift apart. Compiled
// twice, against the full protobuf runtime (hipstack-smid) and the lite one (hipstack-smi): the
// generated classes have the same names in both.
#pragma once

#include <hipstack/events.hpp>
#include <hipstack/smi.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "hipstack/monitor/v1/monitor.pb.h"

namespace hipstack::proto {

namespace pb = ::hipstack::monitor::v1;
using Readings = google::protobuf::RepeatedPtrField<pb::Reading>;

// Enums, each from one table. A value this build does not know (a newer peer's) reads as the
// library's least-claiming one: not_supported for a status, unknown for a verdict.
pb::ReadingStatus to_proto(smi::Status status);
// Text from a peer (a daemon answering a client, a client's request), printable as text from files
// leaves the library: unchanged when it already is (the daemon's text is), else smi::printable_text.
// Every from_proto below applies it to every string, so a hostile peer's controls never reach a
// screen or a page through what they return; code that reads a message's strings itself uses it.
std::string peer_text(const std::string& text);

smi::Status from_proto(pb::ReadingStatus status);
pb::Verdict to_proto(smi::Verdict verdict);
smi::Verdict from_proto(pb::Verdict verdict);

// A new reading of `id` in `out` with what every reading carries (metric id and name, unit,
// instance, status, error code), its value left unset; nullptr when the metric is not in the catalogue
// or `wanted` is not empty and does not list it.
pb::Reading* add_reading(smi::MetricId id, const std::vector<smi::MetricId>& wanted, const std::string& instance,
                         smi::Status status, int error_code, Readings* out);
// Every reading, with its value and detail (filtered by `wanted` as above).
void add_readings(const std::vector<smi::Reading>& readings, const std::vector<smi::MetricId>& wanted, Readings* out);
// A reading by its metric's name; nullopt for a metric this build's catalogue does not know (a
// newer daemon may know more).
std::optional<smi::Reading> from_proto(const pb::Reading& reading);
std::vector<smi::Reading> from_proto(const Readings& readings);

// A device's identity (the daemon adds its own up and sample age).
void to_proto(const smi::DeviceSummary& device, pb::Device* out);
smi::DeviceSummary from_proto(const pb::Device& device);

void to_proto(const smi::HealthReport& report, pb::DeviceHealth* out);
// The findings and verdict of `health`; the device index is the caller's (the message's device).
smi::HealthReport from_proto(const pb::DeviceHealth& health, std::uint32_t device);

void to_proto(const smi::Partition& partition, pb::Partition* out);
smi::Partition from_proto(const pb::Partition& partition);

// An event as found at `found` (milliseconds since 1970 on the wire), with the log's sequence number.
void to_proto(const smi::Event& event, std::chrono::system_clock::time_point found, std::uint64_t sequence, pb::Event* out);
smi::Event from_proto(const pb::Event& event);
std::chrono::system_clock::time_point found_at(const pb::Event& event);

std::int64_t unix_ms(std::chrono::system_clock::time_point at);

}  // namespace hipstack::proto
