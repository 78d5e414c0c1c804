// Validation of hipstack.monitor.v1 request fields: every selector, name and number a client
// sends is checked here, and a bad one is answered INVALID_ARGUMENT or NOT_FOUND naming it.
#pragma once

#include <google/protobuf/repeated_field.h>
#include <grpcpp/support/status.h>
#include <hipstack/smi.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "sampler.hpp"

namespace hipstack::smid {

// Index, BDF or UUID, as hipstack-smi -g takes them.
grpc::Status resolve_device(const Sampler& sampler, const std::string& selector, std::uint32_t& index);
// Empty: every device.
grpc::Status select_devices(const Sampler& sampler, const google::protobuf::RepeatedPtrField<std::string>& selectors,
                            std::vector<std::uint32_t>& out);
// Catalogue names; empty: every metric.
grpc::Status select_metrics(const google::protobuf::RepeatedPtrField<std::string>& names, std::vector<smi::MetricId>& out);
// 0 keeps `interval` (the daemon's fast interval); otherwise 100 ms to 1 h.
grpc::Status watch_interval(std::uint32_t interval_ms, std::chrono::milliseconds& interval);

}  // namespace hipstack::smid
