// Finds amdgpu cards: /sys/class/drm/cardN bound to amdgpu with PCI vendor 0x1002, matched to their
// KFD topology nodes. Several KFD nodes of one card are its partitions; KFD GPU nodes that match no
// card (a topology-only capture, a container without /sys/class/drm) become devices of their own.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <utility>
#include <tuple>

#include "amdgpu.hpp"

namespace hipstack::smi::detail::amdgpu {
namespace {

constexpr std::uint32_t kAmdVendor = 0x1002;

std::optional<int> card_number(std::string_view entry) {
  if (entry.rfind("card", 0) != 0) return std::nullopt;
  const auto n = parse_int(entry.substr(4));  // "card0-DP-1" connectors fail here
  if (!n || *n < 0 || *n > 1'000'000) return std::nullopt;
  return static_cast<int>(*n);
}

std::pair<std::uint32_t, std::uint32_t> parse_id_pair(std::optional<std::string_view> text) {
  if (!text) return {0, 0};
  const auto parts = split_fields(*text, ':');
  if (parts.size() != 2) return {0, 0};
  return {static_cast<std::uint32_t>(parse_hex(parts[0]).value_or(0)),
          static_cast<std::uint32_t>(parse_hex(parts[1]).value_or(0))};
}

// Fills the PCI facts of an amdgpu card from uevent (present in every capture) and the individual id
// files; returns false, having read only uevent, for anything else (other drivers, the partition
// (XCP) platform devices of a partitioned GPU, display-only cards).
bool read_pci_facts(const FsView& fs, AmdGpu& gpu) {
  const FileText uevent = fs.read_text(gpu.device_dir + "/uevent");
  if (!uevent.ok()) return false;
  const KeyValues kv = parse_key_values(uevent.text, '=');
  gpu.driver = std::string(find_value(kv, "DRIVER").value_or(""));
  if (gpu.driver != "amdgpu") return false;
  std::tie(gpu.vendor_id, gpu.device_id) = parse_id_pair(find_value(kv, "PCI_ID"));
  std::tie(gpu.subsystem_vendor_id, gpu.subsystem_device_id) = parse_id_pair(find_value(kv, "PCI_SUBSYS_ID"));
  // Individual files win over uevent where both exist (they are what the PCI core reports).
  const std::pair<const char*, std::uint32_t*> files[] = {{"vendor", &gpu.vendor_id},
                                                          {"device", &gpu.device_id},
                                                          {"subsystem_vendor", &gpu.subsystem_vendor_id},
                                                          {"subsystem_device", &gpu.subsystem_device_id}};
  for (const auto& [file, field] : files) {
    const FileText text = fs.read_text(gpu.device_dir + "/" + file);
    if (!text.ok()) continue;
    if (const auto value = parse_hex(text.text)) *field = static_cast<std::uint32_t>(*value);
  }
  std::optional<PciAddress> address;
  if (const auto slot = find_value(kv, "PCI_SLOT_NAME")) address = parse_bdf(*slot);
  if (!address) {
    // Live layout: the device link ends in the BDF.
    const std::string target = fs.link_target(gpu.device_dir);
    address = parse_bdf(target.substr(target.rfind('/') + 1));
  }
  if (address) gpu.address = *address;
  return address.has_value();
}

std::string read_hwmon_dir(const FsView& fs, const std::string& device_dir) {
  const std::string base = device_dir + "/hwmon";
  std::string first;
  for (const std::string& entry : fs.list(base)) {
    if (entry.rfind("hwmon", 0) != 0) continue;
    const std::string dir = base + "/" + entry;
    if (first.empty()) first = dir;
    if (const FileText name = fs.read_text(dir + "/name"); name.ok() && name.text == "amdgpu") return dir;
  }
  return first;  // a capture whose hwmon lacks its name file
}

void read_hwmon_labels(const FsView& fs, AmdGpu& gpu) {
  if (gpu.hwmon_dir.empty()) return;
  // One listing instead of probing every possible channel: labels are few and most probes would miss.
  for (const std::string& entry : fs.list(gpu.hwmon_dir)) {
    const bool temp = entry.rfind("temp", 0) == 0;
    const bool volt = entry.rfind("in", 0) == 0;
    const std::size_t suffix = entry.find("_label");
    if ((!temp && !volt) || suffix == std::string::npos || suffix + 6 != entry.size()) continue;
    const auto channel = parse_int(std::string_view(entry).substr(temp ? 4 : 2, suffix - (temp ? 4 : 2)));
    if (!channel) continue;
    const FileText label = fs.read_text(gpu.hwmon_dir + "/" + entry);
    if (!label.ok() || label.text.empty()) continue;
    (temp ? gpu.temp_channel : gpu.volt_channel).emplace(label.text, static_cast<int>(*channel));
  }
  // Old kernels have temp1_input without a label: it is the edge sensor (in0 likewise vddgfx).
  if (gpu.temp_channel.empty() && fs.exists(gpu.hwmon_dir + "/temp1_input")) gpu.temp_channel.emplace("edge", 1);
  if (gpu.volt_channel.empty() && fs.exists(gpu.hwmon_dir + "/in0_input")) gpu.volt_channel.emplace("vddgfx", 0);
}

bool same_slot(const KfdNode& node, const PciAddress& address) {
  const std::uint64_t location = node.get("location_id");
  // Partitions of one card carry the partition index in the function bits of location_id.
  return node.get("domain") == address.domain && (location >> 8) == address.bus &&
         ((location >> 3) & 0x1f) == address.device;
}

std::string hex16(std::uint64_t value) { return fmt::format("{:016x}", value); }

// hipstack's UUID for an AMD GPU: vendor, device id and the 64-bit unique id (ASIC serial), so it
// survives reboots and slot moves; without a unique id, the PCI address stands in (stable per slot).
std::string make_uuid(const AmdGpu& gpu) {
  const std::string tail = !gpu.unique_id.empty()
                               ? gpu.unique_id
                               : fmt::format("{:04x}{:02x}{:02x}{:02x}000000", gpu.address.domain, gpu.address.bus,
                                             gpu.address.device, gpu.address.function);
  const std::string hex = fmt::format("{:04x}{:04x}{:08x}", gpu.vendor_id, gpu.device_id, 0) + tail;
  return fmt::format("GPU-{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4),
                     hex.substr(16, 4), hex.substr(20, 12));
}

void finish(const FsView& fs, std::string_view amdgpu_ids, AmdGpu& gpu) {
  std::sort(gpu.kfd.begin(), gpu.kfd.end(),
            [](const KfdNode& a, const KfdNode& b) { return a.get("location_id") < b.get("location_id"); });
  if (!gpu.device_dir.empty()) {
    if (const FileText id = fs.read_text(gpu.device_dir + "/unique_id"); id.ok()) {
      if (const auto value = parse_hex(id.text)) gpu.unique_id = hex16(*value);
    }
  }
  if (gpu.unique_id.empty() && !gpu.kfd.empty() && gpu.kfd.front().get("unique_id") != 0) {
    gpu.unique_id = hex16(gpu.kfd.front().get("unique_id"));
  }
  if (!gpu.device_dir.empty()) {
    if (const FileText text = fs.read_text(gpu.device_dir + "/revision"); text.ok()) {
      gpu.revision = static_cast<std::uint32_t>(parse_hex(text.text).value_or(0));
    }
  }
  gpu.model = lookup_device_id(amdgpu_ids, gpu.device_id, gpu.revision);
  gpu.uuid = make_uuid(gpu);
}

}  // namespace

// The SMU's IP version from the IP discovery table: die/0/<hw id>/<instance>/, MP1_HWID 1
// (soc15_hw_ip.h). Absent on GPUs without the table (before Navi / Renoir) and in older captures.
std::optional<IpVersion> read_mp1_version(const FsView& fs, const std::string& device_dir) {
  const std::string dir = device_dir + "/ip_discovery/die/0/1/0/";
  IpVersion version;
  for (auto [name, part] : {std::pair{"major", &version.major}, {"minor", &version.minor}, {"revision", &version.revision}}) {
    const FileText text = fs.read_text(dir + name);
    const auto number = text.ok() ? parse_uint(text.text) : std::nullopt;
    if (!number || *number > 0xff) return std::nullopt;
    *part = static_cast<unsigned>(*number);
  }
  return version;
}

std::string PciAddress::text() const { return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, device, function); }

std::optional<PciAddress> parse_bdf(std::string_view text) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  char tail = 0;
  const std::string s(text);
  if (std::sscanf(s.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &device, &function, &tail) == 4) {
  } else if (std::sscanf(s.c_str(), "%x:%x.%x%c", &bus, &device, &function, &tail) == 3) {
    domain = 0;
  } else {
    return std::nullopt;
  }
  if (domain > 0xffff || bus > 0xff || device > 0x1f || function > 7) return std::nullopt;
  return PciAddress{domain, bus, device, function};
}

}  // namespace hipstack::smi::detail::amdgpu

namespace hipstack::smi::detail {
using namespace amdgpu;
namespace {

// The GPU nodes of gpu's PCI slot not yet claimed, from node `first` on (its partitions).
void claim_kfd_nodes(const KfdTopology& topology, std::size_t first, std::vector<bool>& node_used, AmdGpu& gpu) {
  for (std::size_t i = first; i < topology.nodes.size(); ++i) {
    if (!node_used[i] && topology.nodes[i].is_gpu() && same_slot(topology.nodes[i], gpu.address)) {
      gpu.kfd.push_back(topology.nodes[i]);
      node_used[i] = true;
    }
  }
}

}  // namespace

namespace amdgpu {

Discovery discover_gpus(const FsView& fs, const KfdTopology& topology) {
  Discovery found;
  // libdrm's table is read only once an AMD GPU turns up: most hosts without one never need it.
  std::optional<std::string> amdgpu_ids_text;
  auto amdgpu_ids = [&amdgpu_ids_text]() -> std::string_view {
    if (!amdgpu_ids_text) amdgpu_ids_text = read_amdgpu_ids();
    return *amdgpu_ids_text;
  };
  std::vector<AmdGpu>& gpus = found.gpus;
  std::vector<bool> node_used(topology.nodes.size(), false);

  std::vector<std::pair<int, std::string>> cards;
  for (const std::string& entry : fs.list("/sys/class/drm")) {
    if (const auto n = card_number(entry)) cards.emplace_back(*n, entry);
  }
  std::sort(cards.begin(), cards.end());
  found.cards = cards.size();
  for (const auto& [number, entry] : cards) {
    if (gpus.size() >= kMaxDevicesPerBackend) {
      ++found.left_out;  // counted as cards, not read: reading thousands of them is what is avoided
      continue;
    }
    AmdGpu gpu;
    gpu.card = number;
    gpu.device_dir = "/sys/class/drm/" + entry + "/device";
    if (!read_pci_facts(fs, gpu) || gpu.vendor_id != kAmdVendor) continue;
    claim_kfd_nodes(topology, 0, node_used, gpu);
    finish(fs, amdgpu_ids(), gpu);
    gpus.push_back(std::move(gpu));
  }

  // KFD GPU nodes without a card: group by (domain, bus, device), keep topology order.
  for (std::size_t i = 0; i < topology.nodes.size(); ++i) {
    const KfdNode& node = topology.nodes[i];
    if (node_used[i] || !node.is_gpu()) continue;
    if (gpus.size() >= kMaxDevicesPerBackend) {
      ++found.left_out;
      continue;
    }
    AmdGpu gpu;
    const std::uint64_t location = node.get("location_id");
    gpu.address = {static_cast<std::uint32_t>(node.get("domain")), static_cast<std::uint32_t>(location >> 8),
                   static_cast<std::uint32_t>((location >> 3) & 0x1f), 0};
    gpu.vendor_id = static_cast<std::uint32_t>(node.get("vendor_id", kAmdVendor));
    gpu.device_id = static_cast<std::uint32_t>(node.get("device_id"));
    claim_kfd_nodes(topology, i, node_used, gpu);
    finish(fs, amdgpu_ids(), gpu);
    gpus.push_back(std::move(gpu));
  }
  return found;
}

}  // namespace amdgpu

BackendProbe probe_amdgpu(const FsView& fs) {
  BackendProbe probe;
  KfdTopology topology = kfd::read_topology(fs);
  Discovery found = discover_gpus(fs, topology);
  std::vector<AmdGpu>& gpus = found.gpus;
  // What only the backend's readings need: the hwmon sensors and the SMU's version.
  for (AmdGpu& gpu : gpus) {
    if (gpu.device_dir.empty()) continue;
    gpu.hwmon_dir = read_hwmon_dir(fs, gpu.device_dir);
    read_hwmon_labels(fs, gpu);
    gpu.mp1 = read_mp1_version(fs, gpu.device_dir);
  }
  const std::size_t left_out = found.left_out;

  if (gpus.empty()) {
    probe.reason = found.cards == 0 ? "no DRM cards under " + fs.host_path("/sys/class/drm") +
                                       " and no KFD GPU nodes under " + fs.host_path("/sys/class/kfd")
                                 : "no card bound to amdgpu with PCI vendor 0x1002";
    return probe;
  }
  probe.reason = fmt::format("{} GPU(s)", gpus.size());
  if (left_out > 0) {
    probe.reason += fmt::format("; {} more card(s) or KFD node(s) left out: at most {} GPUs per backend", left_out,
                                kMaxDevicesPerBackend);
  }
  if (!topology.errors.empty()) {
    probe.reason += "; KFD topology: " + topology.errors.front();
    if (topology.errors.size() > 1) probe.reason += fmt::format(" (and {} more)", topology.errors.size() - 1);
  }
  probe.backend = std::make_unique<AmdgpuBackend>(fs, std::move(topology), std::move(gpus));
  return probe;
}

}  // namespace hipstack::smi::detail
