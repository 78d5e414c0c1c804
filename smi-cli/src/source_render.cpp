// How the outputs name a source's GPUs: with the host first when the source spans several hosts
// (fleet_source.hpp), exactly as for one machine otherwise.
#include <fmt/format.h>

#include "commands.hpp"
#include "fleet_source.hpp"

namespace hipstack::cli {

Json device_json(const DeviceSource& source, std::uint32_t device, const smi::DeviceSummary& summary) {
  if (!source.spans_hosts()) return device_json(summary);
  Json j;
  j["host"] = source.host_of(device);
  Json rest = device_json(summary);
  for (auto& [key, value] : rest.items()) j[key] = std::move(value);
  return j;
}

std::string device_heading(const DeviceSource& source, std::uint32_t device, const smi::DeviceSummary& summary,
                           std::string_view extra) {
  return device_heading(summary, extra, source.spans_hosts() ? fmt::format("host {}  ", source.host_of(device)) : std::string());
}

std::vector<std::string> with_host(const DeviceSource& source, std::uint32_t device, std::vector<std::string> cells) {
  if (source.spans_hosts()) cells.insert(cells.begin(), source.host_of(device));
  return cells;
}

std::vector<std::string> with_host_title(const DeviceSource& source, std::vector<std::string> header, std::string_view title) {
  if (source.spans_hosts()) header.insert(header.begin(), std::string(title));
  return header;
}

std::string csv_header(const DeviceSource& source, std::string_view header) {
  return source.spans_hosts() ? fmt::format("host,{}", header) : std::string(header);
}

std::string fault_lines(const DeviceSource& source, const std::vector<smi::DeviceSummary>& devices,
                        const std::vector<std::uint32_t>& selected) {
  if (!source.spans_hosts()) return fault_lines(devices, selected);
  std::string out;
  for (const std::uint32_t handle : selected) {
    const smi::DeviceSummary& d = devices.at(handle);
    if (!d.fault.empty()) out += fmt::format("host {} GPU {} cannot be read: {}\n", source.host_of(handle), d.index, d.fault);
  }
  return out;
}

void print_json(const DeviceSource& source, Json doc) {
  if (const auto* fleet = dynamic_cast<const FleetSource*>(&source)) {
    Json hosts = Json::array();
    for (const FleetSource::HostState& h : fleet->hosts()) {
      hosts.push_back({{"host", h.host}, {"answered", h.problem.empty()}, {"gpus", h.gpus},
                       {"problem", h.problem.empty() ? Json(nullptr) : Json(h.problem)}});
    }
    doc["hosts"] = std::move(hosts);
  }
  print_json(doc);
}

}  // namespace hipstack::cli
