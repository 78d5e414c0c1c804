// The daemon's own values (sampler views, kept history, attribution) as hipstack.monitor.v1 messages;
// the library's values convert in proto_convert.hpp, both ways.
#pragma once

#include <hipstack/smi.hpp>

#include <chrono>
#include <vector>

#include "hipstack/monitor/v1/monitor.pb.h"
#include "proto_convert.hpp"
#include "sampler.hpp"

namespace hipstack::smid {

namespace pb = ::hipstack::monitor::v1;
using proto::add_readings;
using proto::unix_ms;

// A kept sample's numbers (HistoryValue: no text values, no details).
void add_history_values(const HistoryEntry& entry, const std::vector<smi::MetricId>& wanted,
                        google::protobuf::RepeatedPtrField<pb::Reading>* out);
void fill_device(const Sampler::View& view, std::chrono::steady_clock::time_point now, pb::Device* out);
void fill_metric_info(const smi::MetricInfo& info, pb::MetricInfo* out);
// The attribution of the chosen devices (holders, unmatched devices and containers on them).
void fill_attribution(const Attribution& attribution, const std::vector<std::uint32_t>& devices, pb::GetAttributionResponse* out);

}  // namespace hipstack::smid
