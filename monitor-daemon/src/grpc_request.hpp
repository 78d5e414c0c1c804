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
// Where a GetHistory page resumes: the position in the request's device list, and the newest
// sample of that device already sent (0: none). Written as "POSITION:UNIX_MS" in page_token.
struct HistoryCursor {
  std::size_t device = 0;
  std::uint64_t after_unix_ms = 0;
};
std::string format_history_cursor(const HistoryCursor& cursor);
// "" is the first page; anything not written by format_history_cursor for `device_count` devices
// is INVALID_ARGUMENT.
grpc::Status parse_history_cursor(const std::string& token, std::size_t device_count, HistoryCursor& out);

grpc::Status select_metrics(const google::protobuf::RepeatedPtrField<std::string>& names, std::vector<smi::MetricId>& out);
// 0 keeps `interval` (the daemon's fast interval); otherwise 100 ms to 1 h.
grpc::Status watch_interval(std::uint32_t interval_ms, std::chrono::milliseconds& interval);

}  // namespace hipstack::smid
