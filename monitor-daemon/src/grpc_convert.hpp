// Library values as hipstack.monitor.v1 messages. Names, ids and units come from the catalogue.
#pragma once

#include <hipstack/smi.hpp>

#include <chrono>
#include <vector>

#include "hipstack/monitor/v1/monitor.pb.h"
#include "sampler.hpp"

namespace hipstack::smid {

namespace pb = ::hipstack::monitor::v1;

// Readings pass when `wanted` is empty or lists their metric.
void add_readings(const std::vector<smi::Reading>& readings, const std::vector<smi::MetricId>& wanted,
                  google::protobuf::RepeatedPtrField<pb::Reading>* out);
// A kept sample's numbers (HistoryValue: no text values, no details).
void add_history_values(const HistoryEntry& entry, const std::vector<smi::MetricId>& wanted,
                        google::protobuf::RepeatedPtrField<pb::Reading>* out);
void fill_device(const Sampler::View& view, std::chrono::steady_clock::time_point now, pb::Device* out);
void fill_metric_info(const smi::MetricInfo& info, pb::MetricInfo* out);
void fill_health(const smi::HealthReport& report, pb::DeviceHealth* out);
void fill_partition(const smi::Partition& partition, pb::Partition* out);
std::int64_t unix_ms(std::chrono::system_clock::time_point at);
// The attribution of the chosen devices (holders, unmatched devices and containers on them).
void fill_attribution(const Attribution& attribution, const std::vector<std::uint32_t>& devices, pb::GetAttributionResponse* out);

}  // namespace hipstack::smid
