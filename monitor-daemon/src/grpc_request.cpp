// Validation of hipstack.monitor.v1 request fields: every bad field named, nothing trusted
// (grpc_request.hpp).
#include "grpc_request.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace hipstack::smid {
namespace {

constexpr std::size_t kMaxSelectors = 1024;
constexpr std::size_t kMaxSelectorLength = 128;

// Control characters escaped, so client text cannot play tricks in logs or terminals.
std::string escaped(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else out += c;
  }
  return out;
}

// Quoted for an error message: at most 64 characters, escaped.
std::string shown(const std::string& text) {
  return "\"" + escaped(std::string_view(text).substr(0, 64)) + (text.size() > 64 ? "...\"" : "\"");
}

}  // namespace

grpc::Status resolve_device(const Sampler& sampler, const std::string& selector, std::uint32_t& index) {
  if (selector.empty()) return {grpc::StatusCode::INVALID_ARGUMENT, "device: give an index, BDF or UUID"};
  if (selector.size() > kMaxSelectorLength) {
    return {grpc::StatusCode::INVALID_ARGUMENT, fmt::format("device {}: longer than {} characters", shown(selector), kMaxSelectorLength)};
  }
  try {
    index = sampler.system().resolve(selector);
  } catch (const smi::Error& e) {
    return {grpc::StatusCode::NOT_FOUND, fmt::format("device {}: {}", shown(selector), escaped(e.what()))};
  }
  if (index >= sampler.views().size()) return {grpc::StatusCode::NOT_FOUND, fmt::format("device {}: not sampled", shown(selector))};
  return grpc::Status::OK;
}

grpc::Status select_devices(const Sampler& sampler, const google::protobuf::RepeatedPtrField<std::string>& selectors,
                            std::vector<std::uint32_t>& out) {
  out.clear();
  if (static_cast<std::size_t>(selectors.size()) > kMaxSelectors) {
    return {grpc::StatusCode::INVALID_ARGUMENT, fmt::format("devices: {} given, at most {}", selectors.size(), kMaxSelectors)};
  }
  if (selectors.empty()) {
    for (std::uint32_t i = 0; i < sampler.views().size(); ++i) out.push_back(i);
    return grpc::Status::OK;
  }
  for (const std::string& selector : selectors) {
    std::uint32_t index = 0;
    if (auto status = resolve_device(sampler, selector, index); !status.ok()) return status;
    if (std::find(out.begin(), out.end(), index) == out.end()) out.push_back(index);
  }
  return grpc::Status::OK;
}

grpc::Status select_metrics(const google::protobuf::RepeatedPtrField<std::string>& names, std::vector<smi::MetricId>& out) {
  out.clear();
  if (static_cast<std::size_t>(names.size()) > kMaxSelectors) {
    return {grpc::StatusCode::INVALID_ARGUMENT, fmt::format("metrics: {} given, at most {}", names.size(), kMaxSelectors)};
  }
  for (const std::string& name : names) {
    const smi::MetricInfo* info = name.size() <= kMaxSelectorLength ? smi::find_metric(name) : nullptr;
    if (info == nullptr) {
      return {grpc::StatusCode::INVALID_ARGUMENT,
              fmt::format("metrics: unknown metric {} (ListMetrics or hipstack-smi catalogue lists them)", shown(name))};
    }
    out.push_back(info->id);
  }
  return grpc::Status::OK;
}

grpc::Status watch_interval(std::uint32_t interval_ms, std::chrono::milliseconds& interval) {
  if (interval_ms == 0) return grpc::Status::OK;
  if (interval_ms < 100 || interval_ms > 3'600'000) {
    return {grpc::StatusCode::INVALID_ARGUMENT, fmt::format("interval_ms: {} is outside 100..3600000", interval_ms)};
  }
  interval = std::chrono::milliseconds(interval_ms);
  return grpc::Status::OK;
}

std::string format_history_cursor(const HistoryCursor& cursor) { return fmt::format("{}:{}", cursor.device, cursor.after_unix_ms); }

grpc::Status parse_history_cursor(const std::string& token, std::size_t device_count, HistoryCursor& out) {
  out = {};
  if (token.empty()) return grpc::Status::OK;
  const auto colon = token.find(':');
  const char* begin = token.data();
  const char* end = token.data() + token.size();
  bool ok = colon != std::string::npos;
  if (ok) {
    const auto [device_end, e1] = std::from_chars(begin, begin + colon, out.device);
    const auto [time_end, e2] = std::from_chars(begin + colon + 1, end, out.after_unix_ms);
    ok = e1 == std::errc{} && device_end == begin + colon && e2 == std::errc{} && time_end == end && out.device < device_count;
  }
  if (!ok) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            fmt::format("page_token {} is not a next_page_token of this request (same devices, metrics, max_samples)",
                        shown(token))};
  }
  return grpc::Status::OK;
}

}  // namespace hipstack::smid
