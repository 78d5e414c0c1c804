// Marketing names and compiler targets by PCI device id. libdrm's amdgpu.ids (device + revision ->
// name) is preferred when installed because it is maintained with the driver; our table covers the
// data-centre parts it lacks (Debian 12's copy predates MI300) and gives the gfx target, which
// amdgpu.ids does not carry.
#include <fmt/format.h>

#include <array>
#include <string_view>

#include "../../fs_view.hpp"
#include "amdgpu.hpp"

namespace hipstack::smi::detail::amdgpu {
namespace {

struct KnownDevice {
  std::uint32_t device_id;
  std::string_view name;
  std::string_view gfx_target;
  bool integrated;
};

// Sources: PCI ids database, AMD product pages, KFD gfx_target_version of real captures.
constexpr std::array kKnownDevices = {
    KnownDevice{0x74a1, "AMD Instinct MI300X", "gfx942", false},
    KnownDevice{0x74a5, "AMD Instinct MI325X", "gfx942", false},
    KnownDevice{0x74a0, "AMD Instinct MI300A", "gfx942", true},
    KnownDevice{0x74a9, "AMD Instinct MI300X HF", "gfx942", false},
    KnownDevice{0x74b5, "AMD Instinct MI300X VF", "gfx942", false},
    KnownDevice{0x7408, "AMD Instinct MI250X", "gfx90a", false},
    KnownDevice{0x740c, "AMD Instinct MI250X / MI250", "gfx90a", false},
    KnownDevice{0x740f, "AMD Instinct MI210", "gfx90a", false},
    KnownDevice{0x738c, "AMD Instinct MI100", "gfx908", false},
    KnownDevice{0x738e, "AMD Instinct MI100", "gfx908", false},
    KnownDevice{0x66a1, "AMD Radeon Instinct MI50 / MI60", "gfx906", false},
    KnownDevice{0x6860, "AMD Radeon Instinct MI25", "gfx900", false},
    KnownDevice{0x687f, "AMD Radeon RX Vega 56 / 64", "gfx900", false},
    KnownDevice{0x7550, "AMD Radeon RX 9070 / 9070 XT", "gfx1201", false},
    KnownDevice{0x744c, "AMD Radeon RX 7900 XTX / XT / GRE", "gfx1100", false},
    KnownDevice{0x747e, "AMD Radeon RX 7800 XT / 7700 XT", "gfx1101", false},
    KnownDevice{0x7480, "AMD Radeon RX 7600 / 7600S / 7700S", "gfx1102", false},
    KnownDevice{0x73bf, "AMD Radeon RX 6800 / 6800 XT / 6900 XT", "gfx1030", false},
    KnownDevice{0x73af, "AMD Radeon RX 6900 XT", "gfx1030", false},
    KnownDevice{0x73df, "AMD Radeon RX 6700 / 6700 XT / 6750 XT", "gfx1031", false},
    KnownDevice{0x73ff, "AMD Radeon RX 6600 / 6600 XT / 6650 XT", "gfx1032", false},
    KnownDevice{0x731f, "AMD Radeon RX 5600 XT / 5700 / 5700 XT", "gfx1010", false},
    KnownDevice{0x7340, "AMD Radeon RX 5500 / 5500 XT", "gfx1012", false},
    KnownDevice{0x67df, "AMD Radeon RX 470 / 480 / 570 / 580", "gfx803", false},
    KnownDevice{0x6617, "AMD Radeon R7 240", "gfx602", false},
    KnownDevice{0x679a, "AMD Radeon HD 7950 / R9 280", "gfx600", false},
    KnownDevice{0x6818, "AMD Radeon HD 7870", "gfx602", false},
    KnownDevice{0x15bf, "AMD Radeon 780M (Phoenix)", "gfx1103", true},
    KnownDevice{0x15c8, "AMD Radeon 740M (Phoenix2)", "gfx1103", true},
    KnownDevice{0x1636, "AMD Radeon Graphics (Renoir)", "gfx90c", true},
    KnownDevice{0x163f, "AMD Custom GPU 0405 (Van Gogh)", "gfx1033", true},
    KnownDevice{0x150e, "AMD Radeon 890M (Strix Point)", "gfx1150", true},
};

struct IdsMatch {
  std::string exact;         // device and revision match
  std::string any_revision;  // first line of the device
};

// Looks the device up in libdrm's amdgpu.ids text: "DEVICE,\tREVISION,\tNAME" lines.
IdsMatch lookup_amdgpu_ids(std::string_view text, std::uint32_t device_id, std::uint32_t revision) {
  IdsMatch match;
  for (const std::string_view line : split_fields(text, '\n')) {
    if (line.front() == '#') continue;
    const auto fields = split_fields(line, ',');
    if (fields.size() < 3 || parse_hex(fields[0]).value_or(~0ULL) != device_id) continue;
    const std::string name(line.substr(line.find(fields[2])));  // the name may contain commas
    if (parse_hex(fields[1]).value_or(~0ULL) == revision) {
      match.exact = name;
      break;
    }
    if (match.any_revision.empty()) match.any_revision = name;
  }
  return match;
}

}  // namespace

std::string read_amdgpu_ids() {
  const RootedFs host("", "", "");
  for (const char* path : {"/usr/share/libdrm/amdgpu.ids", "/opt/amdgpu/share/libdrm/amdgpu.ids"}) {
    if (FileText file = host.read_text(path); file.ok()) return std::move(file.text);
  }
  return {};
}

DeviceIdFacts lookup_device_id(std::string_view amdgpu_ids, std::uint32_t device_id, std::uint32_t revision) {
  DeviceIdFacts facts;
  for (const KnownDevice& known : kKnownDevices) {
    if (known.device_id != device_id) continue;
    facts = {std::string(known.name), std::string(known.gfx_target), known.integrated, true};
    break;
  }
  // An exact amdgpu.ids match names the SKU; otherwise our family name beats a guessed revision.
  IdsMatch ids = lookup_amdgpu_ids(amdgpu_ids, device_id, revision);
  if (!ids.exact.empty()) {
    facts.name = std::move(ids.exact);
  } else if (facts.name.empty()) {
    facts.name = std::move(ids.any_revision);
  }
  if (facts.name.empty()) facts.name = fmt::format("AMD GPU 0x{:04x}", device_id);
  return facts;
}

}  // namespace hipstack::smi::detail::amdgpu
