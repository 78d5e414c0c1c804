// The health engine: vendor-neutral checks over one device's readings (docs/health.md lists them).
// Each check yields PASS / WARN / FAIL with the reading, the threshold and a remediation, or
// UNKNOWN when the device does not report what the check needs.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <hipstack/gpu_errors.hpp>
#include <hipstack/smi.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>

#include "parse.hpp"
#include "plausibility.hpp"

namespace hipstack::smi {
namespace {

constexpr HealthCheck kHealthChecks[] = {
#define HIPSTACK_SMI_X(id, identifier, name) HealthCheck::identifier,
    HIPSTACK_SMI_HEALTH_CHECKS(HIPSTACK_SMI_X)
#undef HIPSTACK_SMI_X
};

std::string name_of(HealthCheck check) { return std::string(health_check_name(check)); }

// NVML clock-event reason bits (nvmlClocksEventReason*).
constexpr std::int64_t kNvSwPowerCap = 0x4, kNvHwSlowdown = 0x8, kNvSwThermal = 0x20, kNvHwThermal = 0x40,
                       kNvPowerBrake = 0x80;

class Facts {
 public:
  explicit Facts(const std::vector<Reading>& readings) {
    for (const Reading& r : readings) by_key_[{r.id, r.instance}] = &r;
  }
  [[nodiscard]] std::optional<double> number(MetricId id, const std::string& instance = {}) const {
    const auto it = by_key_.find({id, instance});
    return it == by_key_.end() ? std::nullopt : it->second->number();
  }
  [[nodiscard]] std::vector<const Reading*> all(MetricId id) const {
    std::vector<const Reading*> out;
    for (const auto& [key, r] : by_key_) {
      if (key.first == id) out.push_back(r);
    }
    return out;
  }

 private:
  std::map<std::pair<MetricId, std::string>, const Reading*> by_key_;
};

// "2 pages" / "1 page": units that are nouns take a plural.
std::string count_of(double v, const char* noun) {
  return fmt::format("{:.0f} {}{}", v, noun, v == 1 ? "" : "s");
}

// v with at most two decimals, trailing zeros dropped, and its unit ("42.5 W").
std::string with_unit(double v, const char* unit) {
  std::string text = fmt::format("{:.2f}", v);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return unit[0] != '\0' ? text + " " + unit : text;
}

class Checker {
 public:
  Checker(const Facts& facts, const HealthPolicy& policy, std::vector<HealthFinding>& out)
      : facts_(facts), policy_(policy), out_(out) {}

  void add(HealthCheck check, Verdict verdict, std::string reading, std::string threshold, std::string message,
           std::string remediation = {}) {
    out_.push_back({name_of(check), verdict, std::move(reading), std::move(threshold), std::move(message), std::move(remediation)});
  }
  void unknown(HealthCheck check, std::string why) { add(check, Verdict::unknown, "", "", std::move(why)); }

  // Every temperature the catalogue judges against a critical limit (edge, junction, memory).
  void thermal() {
    bool any = false;
    for (const MetricInfo& sensor : catalogue()) {
      const auto against = metric_limit(sensor.id);
      if (!against || against->role != LimitRole::critical || sensor.unit != Unit::celsius) continue;
      const auto now = facts_.number(sensor.id);
      const auto critical = facts_.number(against->limit);
      if (!now || !critical || *critical <= 0) continue;
      any = true;
      std::string_view name = sensor.name;
      if (name.starts_with("temperature_")) name.remove_prefix(std::string_view("temperature_").size());
      const std::string reading = fmt::format("{} {}", name, with_unit(*now, "°C"));
      const std::string limit = fmt::format("critical {}", with_unit(*critical, "°C"));
      if (*now >= *critical) {
        add(HealthCheck::thermal_temperature, Verdict::fail, reading, limit, fmt::format("{} temperature at or above its critical limit", name),
            "Check cooling (airflow, fans, heatsink contact) and reduce load; the GPU throttles hard here.");
      } else if (*now >= *critical - policy_.thermal_margin) {
        add(HealthCheck::thermal_temperature, Verdict::warn, reading, fmt::format("{}, margin {}", limit, with_unit(policy_.thermal_margin, "°C")),
            fmt::format("{} temperature within {} of its critical limit", name, with_unit(policy_.thermal_margin, "°C")),
            "Check cooling and ambient temperature before the GPU throttles.");
      } else {
        add(HealthCheck::thermal_temperature, Verdict::pass, reading, limit, fmt::format("{} temperature below its critical limit", name));
      }
    }
    if (!any) unknown(HealthCheck::thermal_temperature, "no temperature with a critical limit is reported");
  }

  // Share of time a firmware throttle reason was active since the driver loaded (AMD residency
  // counters), or the reason bits active now (NVIDIA clock-event reasons).
  void throttling(HealthCheck check, std::initializer_list<const char*> reasons, std::int64_t nvidia_bits,
                  const char* what, const char* remediation) {
    const auto total = facts_.number(MetricId::violation_accumulation_count);
    if (total && *total > 0) {
      double worst = 0;
      std::string worst_reason;
      for (const char* reason : reasons) {
        const auto count = facts_.number(MetricId::violation_residency, reason);
        if (count && *count / *total > worst) {
          worst = *count / *total;
          worst_reason = reason;
        }
      }
      const std::string reading = worst_reason.empty() ? "0 %" : fmt::format("{} {}", worst_reason, with_unit(worst * 100, "%"));
      const std::string limit = fmt::format("{} of the time", with_unit(policy_.throttle_share * 100, "%"));
      if (worst >= policy_.throttle_share) {
        add(check, Verdict::warn, reading, limit, fmt::format("{} throttling {} of the time since the driver loaded", what, with_unit(worst * 100, "%")), remediation);
      } else {
        add(check, Verdict::pass, reading, limit, fmt::format("little or no {} throttling", what));
      }
      return;
    }
    const auto bits = facts_.number(MetricId::throttle_status);
    if (bits && vendor_ == "amd") {
      // gpu_metrics' throttler bits: 0 means no throttler is active now on every ASIC; which bit is
      // which reason differs per SMU generation, so a set bit is not attributed to a reason.
      const std::string reading = fmt::format("throttle status 0x{:x}", static_cast<std::int64_t>(*bits));
      if (*bits == 0) {
        add(check, Verdict::pass, reading, "0", fmt::format("no {} throttling now (no throttler bit set)", what));
      } else {
        add(check, Verdict::unknown, reading, "",
            fmt::format("throttler bits are set, but this ASIC's bits are not decoded, so {} throttling cannot be told apart", what));
      }
      return;
    }
    if (bits && vendor_ == "nvidia") {
      const auto active = static_cast<std::int64_t>(*bits) & nvidia_bits;
      const std::string reading = fmt::format("clock-event reasons 0x{:x}", static_cast<std::int64_t>(*bits));
      if (active != 0) {
        add(check, Verdict::warn, reading, fmt::format("bits 0x{:x}", nvidia_bits), fmt::format("{} throttling now", what), remediation);
      } else {
        add(check, Verdict::pass, reading, fmt::format("bits 0x{:x}", nvidia_bits), fmt::format("no {} throttling now", what));
      }
      return;
    }
    unknown(check, fmt::format("no {} throttle residency or reason bits reported", what));
  }

  void power() {
    const auto power = facts_.number(MetricId::power_current) ? facts_.number(MetricId::power_current) : facts_.number(MetricId::power_average);
    const auto cap = facts_.number(MetricId::power_cap);
    if (!power || !cap || *cap <= 0) {
      unknown(HealthCheck::power_at_cap, "power or power cap not reported");
    } else if (*power >= *cap * policy_.power_cap_share) {
      add(HealthCheck::power_at_cap, Verdict::warn, with_unit(*power, "W"), fmt::format("{} of cap {}", with_unit(policy_.power_cap_share * 100, "%"), with_unit(*cap, "W")),
          "drawing its full power cap: clocks are power-limited",
          "Expected under full load; otherwise check the power cap and the workload's power profile.");
    } else {
      add(HealthCheck::power_at_cap, Verdict::pass, with_unit(*power, "W"), fmt::format("cap {}", with_unit(*cap, "W")), "below the power cap");
    }
  }

  void clocks() {
    const auto busy = facts_.number(MetricId::gpu_busy);
    const auto clock = facts_.number(MetricId::clock_sclk);
    const auto max = facts_.number(MetricId::clock_sclk_max);
    if (!busy || !clock || !max || *max <= 0) return unknown(HealthCheck::clocks_stuck_low, "busy %, clock or maximum clock not reported");
    const std::string reading = fmt::format("{} at {} busy", with_unit(*clock, "MHz"), with_unit(*busy, "%"));
    const std::string limit = fmt::format("{} of {} when busy >= {}", with_unit(policy_.clock_low_share * 100, "%"), with_unit(*max, "MHz"),
                                          with_unit(policy_.busy_for_clock_check, "%"));
    if (*busy >= policy_.busy_for_clock_check && *clock < *max * policy_.clock_low_share) {
      add(HealthCheck::clocks_stuck_low, Verdict::warn, reading, limit, "graphics clock low while the GPU is busy",
          "Look for throttling (thermal, power), a forced performance level or a low clock limit.");
    } else {
      add(HealthCheck::clocks_stuck_low, Verdict::pass, reading, limit, "clock consistent with load");
    }
  }

  void pcie() {
    const auto speed = facts_.number(MetricId::pcie_speed);
    const auto width = facts_.number(MetricId::pcie_width);
    const auto max_speed = facts_.number(MetricId::pcie_speed_max);
    const auto max_width = facts_.number(MetricId::pcie_width_max);
    if (!speed || !width || !max_speed || !max_width) {
      unknown(HealthCheck::pcie_link_degraded, "current or maximum PCIe link not reported");
    } else {
      const std::string reading = fmt::format("{} x{}", with_unit(*speed, "GT/s"), with_unit(*width, ""));
      const std::string limit = fmt::format("max {} x{}", with_unit(*max_speed, "GT/s"), with_unit(*max_width, ""));
      // Width below the maximum is always a fault (slot, riser, seating). Speed below it is
      // expected while idle (GPUs lower it to save power), so it counts only on a busy GPU.
      const auto busy = facts_.number(MetricId::gpu_busy);
      const bool busy_now = busy && *busy >= policy_.busy_for_clock_check;
      if (*width < *max_width) {
        add(HealthCheck::pcie_link_degraded, Verdict::warn, reading, limit, "PCIe link narrower than its maximum width",
            "Reseat the card; check the slot, riser or cable and the BIOS bifurcation setting.");
      } else if (*speed < *max_speed && busy_now) {
        add(HealthCheck::pcie_link_degraded, Verdict::warn, reading, fmt::format("{} when busy >= {}", limit, with_unit(policy_.busy_for_clock_check, "%")),
            "PCIe link below its maximum speed while the GPU is busy",
            "Reseat the card; check the slot, riser or cable and the BIOS link speed setting.");
      } else if (*speed < *max_speed) {
        add(HealthCheck::pcie_link_degraded, Verdict::pass, reading, limit,
            busy ? "full width; speed lowered while not busy (power saving)"
                 : "full width; speed below its maximum, as when idle (busy % not reported)");
      } else {
        add(HealthCheck::pcie_link_degraded, Verdict::pass, reading, limit, "PCIe link at its maximum");
      }
    }
    const auto replays = facts_.number(MetricId::pcie_replay_count);
    if (!replays) return unknown(HealthCheck::pcie_replays, "PCIe replay count not reported");
    if (*replays >= static_cast<double>(policy_.pcie_replays)) {
      add(HealthCheck::pcie_replays, Verdict::warn, with_unit(*replays, ""), fmt::format("{} since driver load", policy_.pcie_replays),
          "many PCIe replays: the link retransmits", "Check the slot, riser and cabling; watch whether the count keeps rising.");
    } else {
      add(HealthCheck::pcie_replays, Verdict::pass, with_unit(*replays, ""), fmt::format("{} since driver load", policy_.pcie_replays), "few PCIe replays");
    }
  }

  void memory() {
    const auto uncorrected = facts_.number(MetricId::ecc_uncorrected_volatile) ? facts_.number(MetricId::ecc_uncorrected_volatile)
                                                                          : facts_.number(MetricId::ecc_uncorrected_aggregate);
    if (!uncorrected) {
      unknown(HealthCheck::memory_uncorrectable_ecc, "uncorrectable ECC count not reported");
    } else if (*uncorrected > 0) {
      std::string blocks;
      for (const Reading* r : facts_.all(MetricId::ras_uncorrectable)) {
        if (r->number().value_or(0) > 0) blocks += fmt::format("{}{} {}", blocks.empty() ? " (" : ", ", r->instance, with_unit(*r->number(), ""));
      }
      if (!blocks.empty()) blocks += ")";
      add(HealthCheck::memory_uncorrectable_ecc, Verdict::fail, with_unit(*uncorrected, "") + blocks, "0",
          "uncorrectable memory errors: data may have been corrupted",
          "Drain the GPU, reset it so the driver retires the pages, and replace it if errors recur.");
    } else {
      add(HealthCheck::memory_uncorrectable_ecc, Verdict::pass, "0", "0", "no uncorrectable memory errors");
    }
    const auto corrected = facts_.number(MetricId::ecc_corrected_volatile);
    if (!corrected) {
      unknown(HealthCheck::memory_correctable_ecc, "correctable ECC count not reported");
    } else if (*corrected >= static_cast<double>(policy_.correctable_ecc)) {
      add(HealthCheck::memory_correctable_ecc, Verdict::warn, with_unit(*corrected, ""), fmt::format("{} since driver load", policy_.correctable_ecc),
          "many correctable memory errors", "Watch the rate; schedule a reset and a memory test (hipstack-validate) if it keeps rising.");
    } else {
      add(HealthCheck::memory_correctable_ecc, Verdict::pass, with_unit(*corrected, ""), fmt::format("{} since driver load", policy_.correctable_ecc),
          "few correctable memory errors");
    }
    bad_pages();
    ras_readable();
  }

  void bad_pages() {
    const auto pending = facts_.number(MetricId::bad_pages_pending);
    const auto nv_pending = facts_.number(MetricId::remapped_rows_pending);
    if (pending || nv_pending) {
      const double count = pending.value_or(0) + nv_pending.value_or(0);
      if (count > 0) {
        add(HealthCheck::memory_bad_pages_pending, Verdict::warn, count_of(count, pending ? "page" : "remapping"), "0",
            "memory pages wait to be retired", "Reset the GPU (when idle) so the driver retires them.");
      } else {
        add(HealthCheck::memory_bad_pages_pending, Verdict::pass, "0", "0", "no memory pages waiting to be retired");
      }
    } else {
      unknown(HealthCheck::memory_bad_pages_pending, "no retired-page table reported");
    }
    const auto reserved = facts_.number(MetricId::bad_pages_reserved);
    const auto failed = facts_.number(MetricId::bad_pages_failed);
    const auto threshold = facts_.number(MetricId::bad_page_threshold);
    const auto nv_failed = facts_.number(MetricId::remapped_rows_failed);
    if (nv_failed && *nv_failed > 0) {
      add(HealthCheck::memory_bad_page_threshold, Verdict::fail, "row remapping failed", "0",
          "the GPU could not remap a failing memory row", "Replace the GPU (row remapping resources exhausted).");
      return;
    }
    if (nv_failed && !reserved) {
      // NVIDIA GPUs since A100 repair memory by row remapping; it has no page threshold, only failure.
      add(HealthCheck::memory_bad_page_threshold, Verdict::pass, "no failed row remapping", "0", "memory repair resources left");
      return;
    }
    if (!reserved) return unknown(HealthCheck::memory_bad_page_threshold, "no retired-page counts reported");
    // The driver counts every stored record (reserved, pending, failed) against its threshold.
    const double retired = *reserved + pending.value_or(0) + failed.value_or(0);
    if (failed && *failed > 0) {
      add(HealthCheck::memory_bad_page_threshold, Verdict::fail, fmt::format("{} failed to retire", count_of(*failed, "page")), "0",
          "the driver could not retire a bad page", "Replace the GPU or contact the vendor; its memory can no longer be repaired.");
    } else if (threshold && retired >= *threshold) {
      add(HealthCheck::memory_bad_page_threshold, Verdict::fail, count_of(retired, "page"), fmt::format("threshold {}", with_unit(*threshold, "")),
          "retired pages reached the driver's threshold", "Replace the GPU: the driver treats it as bad.");
    } else if (threshold && retired >= *threshold * policy_.bad_page_share) {
      add(HealthCheck::memory_bad_page_threshold, Verdict::warn, count_of(retired, "page"),
          fmt::format("{} of threshold {}", with_unit(policy_.bad_page_share * 100, "%"), with_unit(*threshold, "")),
          "retired pages near the driver's threshold", "Plan a replacement.");
    } else {
      add(HealthCheck::memory_bad_page_threshold, Verdict::pass, count_of(retired, "page"),
          threshold ? fmt::format("threshold {}", with_unit(*threshold, "")) : std::string("driver default threshold"),
          "few retired pages");
    }
  }

  // XGMI (GPU-to-GPU fabric) link errors, from the xgmi_wafl RAS block; no finding without one.
  void xgmi() {
    std::optional<double> uncorrected;
    std::optional<double> corrected;
    for (const Reading* r : facts_.all(MetricId::ras_uncorrectable)) {
      if (r->instance == "xgmi_wafl" && r->number()) uncorrected = r->number();
    }
    for (const Reading* r : facts_.all(MetricId::ras_correctable)) {
      if (r->instance == "xgmi_wafl" && r->number()) corrected = r->number();
    }
    if (!uncorrected && !corrected) return;
    if (uncorrected.value_or(0) > 0) {
      add(HealthCheck::xgmi_errors, Verdict::fail, fmt::format("{} uncorrectable", with_unit(*uncorrected, "")), "0",
          "uncorrectable errors on the XGMI links to other GPUs",
          "Drain the node, check the XGMI bridges or cabling, and reset the GPUs of the hive; replace the part if it recurs.");
    } else if (corrected.value_or(0) >= static_cast<double>(policy_.correctable_ecc)) {
      add(HealthCheck::xgmi_errors, Verdict::warn, fmt::format("{} correctable", with_unit(*corrected, "")),
          fmt::format("{} since driver load", policy_.correctable_ecc), "many correctable errors on the XGMI links",
          "Watch the rate; reseat or replace the XGMI bridge if it keeps rising.");
    } else {
      add(HealthCheck::xgmi_errors, Verdict::pass, fmt::format("{} correctable", with_unit(corrected.value_or(0), "")), "0 uncorrectable",
          "XGMI links without uncorrectable errors");
    }
  }

  void ras_readable() {
    std::string blocks;
    for (const MetricId id : {MetricId::ras_correctable, MetricId::ras_uncorrectable}) {
      for (const Reading* r : facts_.all(id)) {
        if ((r->status == Status::unavailable || r->status == Status::error) && !r->instance.empty() &&
            blocks.find(r->instance) == std::string::npos) {
          blocks += (blocks.empty() ? "" : ", ") + r->instance;
        }
      }
    }
    if (!blocks.empty()) {
      add(HealthCheck::ras_unreadable, Verdict::unknown, blocks, "", fmt::format("RAS error counters could not be read now: {}", blocks),
          "Read again later; a block that stays inaccessible needs a driver or firmware update.");
    }
  }

  // Readings that cannot be true (plausibility.hpp): a GPU or driver that reports an impossible
  // number cannot be vouched for in what else it says. Any impossible reading fails; a pass needs
  // live readings judged (static facts alone say nothing of the GPU's state: a KFD topology alone
  // stays UNKNOWN).
  void plausible(const std::vector<Reading>& readings) {
    std::vector<const Reading*> impossible;
    std::size_t judged = 0;
    for (const Reading& r : readings) {
      const MetricInfo* info = find_metric(r.id);
      if (r.status == Status::error && r.error_code == detail::kImplausibleErrorCode) {
        impossible.push_back(&r);
      } else if (r.ok() && r.number() && info != nullptr &&
                 (info->kind == Kind::live || info->kind == Kind::counter || info->kind == Kind::window)) {
        ++judged;
      }
    }
    if (!impossible.empty()) {
      std::vector<std::string> names;
      for (const Reading* r : impossible) {
        const MetricInfo* info = find_metric(r->id);
        const std::string name = info != nullptr ? std::string(info->name) : std::to_string(static_cast<std::uint32_t>(r->id));
        names.push_back(r->instance.empty() ? name : fmt::format("{}[{}]", name, r->instance));
      }
      const std::string more = impossible.size() > 1 ? fmt::format(" (and {} more)", impossible.size() - 1) : "";
      add(HealthCheck::readings_plausible, Verdict::fail, fmt::format("{}", fmt::join(names, ", ")),
          "within their physical and driver bounds", impossible.front()->detail + more,
          "The driver or firmware reports values that cannot be true: compare with the vendor's tool, update the "
          "driver and firmware, and do not trust this GPU's other readings until it reports sane values.");
    } else if (judged > 0) {
      add(HealthCheck::readings_plausible, Verdict::pass, fmt::format("{} live readings", judged),
          "within their physical and driver bounds", "every reading is one the GPU can have");
    } else {
      unknown(HealthCheck::readings_plausible, "no live reading to judge");
    }
  }

  void set_vendor(std::string vendor) { vendor_ = std::move(vendor); }

 private:
  const Facts& facts_;
  const HealthPolicy& policy_;
  std::vector<HealthFinding>& out_;
  std::string vendor_;
};

// Firmware of one GPU against the other GPUs of the same model in the node: a GPU left on other
// firmware after an update behaves differently from its peers. No finding without peers.
void check_firmware(const System& system, std::uint32_t device, const std::vector<Reading>& own,
                    std::vector<HealthFinding>& out) {
  const auto devices = system.devices();
  const DeviceSummary& self = devices.at(device);
  const auto versions_of = [](const std::vector<Reading>& readings) {
    std::map<std::string, std::string> out_versions;  // "vbios" or IP block -> version
    for (const Reading& r : readings) {
      const auto text = r.text();
      if (!r.ok() || !text) continue;
      if (r.id == MetricId::vbios_version) out_versions["vbios"] = std::string(*text);
      if (r.id == MetricId::firmware_version) out_versions[r.instance] = std::string(*text);
    }
    return out_versions;
  };
  const auto mine = versions_of(own);
  if (mine.empty()) return;
  SampleOptions identity;
  identity.identity = true;
  identity.live = false;
  identity.metrics = {MetricId::vbios_version, MetricId::firmware_version};
  std::size_t peers = 0;
  for (const DeviceSummary& other : devices) {
    if (other.index == device || other.vendor != self.vendor || other.name != self.name) continue;
    ++peers;
    for (const auto& [what, theirs] : versions_of(system.sample(other.index, identity))) {
      const auto it = mine.find(what);
      if (it == mine.end() || it->second == theirs) continue;
      out.push_back({name_of(HealthCheck::firmware_consistent), Verdict::warn, fmt::format("{} {}", what, it->second),
                     fmt::format("GPU {} ({}) has {}", other.index, other.bdf, theirs),
                     fmt::format("{} firmware differs from another {} in this node", what, self.name),
                     "Update every GPU of the node to the same firmware release (and reboot), so they behave alike."});
      return;
    }
  }
  if (peers > 0) {
    out.push_back({name_of(HealthCheck::firmware_consistent), Verdict::pass, fmt::format("{} versions", mine.size()),
                   fmt::format("same as {} other GPU(s) of this model", peers), "firmware matches the node's other GPUs of this model", ""});
  }
}

// The driver's compute side (KFD) came up on this GPU: an amdgpu GPU without a KFD node, where the
// node's other GPUs have theirs, runs graphics but no HIP/ROCm work (a failed KFD init, firmware
// or IOMMU trouble). Without any KFD node in sight (a capture without /sys/class/kfd) there is no
// finding: nothing to tell a missing node from a missing recording.
void check_compute_init(const System& system, std::uint32_t device, std::vector<HealthFinding>& out) {
  const auto devices = system.devices();
  const DeviceSummary& self = devices.at(device);
  if (self.backend != "amdgpu") return;
  const bool others_have_kfd = std::any_of(devices.begin(), devices.end(), [&](const DeviceSummary& d) {
    return d.index != device && d.backend == "amdgpu" && d.partition_count > 0;
  });
  // A PASS only beside other checks: a GPU known from the KFD topology alone stays "cannot check".
  const bool checked = std::any_of(out.begin(), out.end(), [](const HealthFinding& f) { return f.verdict != Verdict::unknown; });
  if (self.partition_count > 0) {
    if (checked) {
      out.push_back({name_of(HealthCheck::driver_compute_init), Verdict::pass, fmt::format("{} KFD node(s)", self.partition_count), "at least 1",
                     "the driver's compute side (KFD) is up", ""});
    }
  } else if (others_have_kfd) {
    out.push_back({name_of(HealthCheck::driver_compute_init), Verdict::fail, "no KFD node", "at least 1 (the node's other GPUs have theirs)",
                   "the amdgpu driver runs this GPU but its compute side (KFD) did not come up: HIP/ROCm cannot use it",
                   "Check the kernel log (dmesg | grep -i kfd) for the init failure (firmware, IOMMU, memory); "
                   "reload the driver or reboot, and replace the GPU if it persists."});
  }
}

}  // namespace

std::string_view health_check_name(HealthCheck check) noexcept {
  switch (check) {
#define HIPSTACK_SMI_X(id, identifier, name) \
  case HealthCheck::identifier: return name;
    HIPSTACK_SMI_HEALTH_CHECKS(HIPSTACK_SMI_X)
#undef HIPSTACK_SMI_X
    case HealthCheck::other: break;
  }
  return "";
}

HealthCheck find_health_check(std::string_view name) noexcept {
  for (const HealthCheck check : kHealthChecks) {
    if (health_check_name(check) == name) return check;
  }
  return HealthCheck::other;
}

std::span<const HealthCheck> health_checks() noexcept { return kHealthChecks; }

std::string_view verdict_name(Verdict verdict) noexcept {
  switch (verdict) {
    case Verdict::pass: return "PASS";
    case Verdict::warn: return "WARN";
    case Verdict::fail: return "FAIL";
    case Verdict::unknown: return "UNKNOWN";
  }
  return "UNKNOWN";
}

HealthPolicy HealthPolicy::from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(Error::Code::invalid_argument, fmt::format("cannot read health policy {}", path));
  HealthPolicy policy;
  const std::map<std::string, double*, std::less<>> reals = {
      {"thermal_margin", &policy.thermal_margin},       {"throttle_share", &policy.throttle_share},
      {"power_cap_share", &policy.power_cap_share},     {"busy_for_clock_check", &policy.busy_for_clock_check},
      {"clock_low_share", &policy.clock_low_share},     {"bad_page_share", &policy.bad_page_share}};
  const std::map<std::string, std::int64_t*, std::less<>> counts = {{"correctable_ecc", &policy.correctable_ecc},
                                                                    {"pcie_replays", &policy.pcie_replays}};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    const auto fields = detail::split_fields(line, '=');
    if (fields.empty()) continue;
    const std::string where = fmt::format("{}:{}", path, number);
    if (fields.size() != 2) throw Error(Error::Code::invalid_argument, where + ": expected \"key = value\"");
    const std::string key(fields[0]);
    if (const auto real = reals.find(key); real != reals.end()) {
      const auto value = detail::parse_real(fields[1]);
      if (!value || *value < 0) throw Error(Error::Code::invalid_argument, fmt::format("{}: {} must be a number >= 0", where, key));
      *real->second = *value;
    } else if (const auto count = counts.find(key); count != counts.end()) {
      const auto value = detail::parse_int(fields[1]);
      if (!value || *value < 0) throw Error(Error::Code::invalid_argument, fmt::format("{}: {} must be an integer >= 0", where, key));
      *count->second = *value;
    } else {
      throw Error(Error::Code::invalid_argument, fmt::format("{}: unknown key \"{}\"", where, key));
    }
  }
  return policy;
}

HealthReport System::health(std::uint32_t device, const HealthPolicy& policy) const {
  SampleOptions all;
  all.identity = all.static_info = all.live = true;
  return health(device, sample(device, all), policy);
}

namespace {
HealthReport checks_of(const System& system, std::uint32_t device, const std::vector<Reading>& sampled, const HealthPolicy& policy);
}  // namespace

HealthReport System::health(std::uint32_t device, const std::vector<Reading>& sampled, const HealthPolicy& policy) const {
  return health(device, sampled, policy, one_look_errors_finding(*this, device, std::chrono::system_clock::now()));
}

HealthReport System::health(std::uint32_t device, const std::vector<Reading>& sampled, const HealthPolicy& policy,
                            HealthFinding errors) const {
  HealthReport report = checks_of(*this, device, sampled, policy);
  report.findings.push_back(std::move(errors));
  settle_overall(report);
  return report;
}

namespace {

// Every check but errors.recent, which the caller's look at the GPU's errors adds.
HealthReport checks_of(const System& system, std::uint32_t device, const std::vector<Reading>& sampled, const HealthPolicy& policy) {
  // Judged again: readings from elsewhere (a daemon's samples, a caller's own list) may not have
  // passed System::sample's plausibility marks, and no check may use an impossible value.
  std::vector<Reading> readings = sampled;
  static_cast<void>(detail::mark_implausible(readings));
  const Facts facts(readings);
  HealthReport report;
  report.device = device;
  // A GPU that cannot be read fails: nothing about it can be vouched for, and it may be lost.
  const std::string lost = system.fault(device);
  if (!lost.empty() || !device_answered(readings)) {
    std::string why = lost;
    for (const Reading& r : readings) {
      if (!why.empty()) break;
      if (r.status == Status::error || r.status == Status::unavailable) why = r.detail;
    }
    report.findings.push_back({name_of(HealthCheck::device_readable), Verdict::fail, "no reading succeeded", "the GPU answers",
                               fmt::format("the GPU cannot be read: {}", why),
                               "Check the kernel log (dmesg) for the GPU falling off the bus or the driver letting go; "
                               "a reset, reseat or reboot may be needed."});
    report.overall = Verdict::fail;
    return report;
  }
  Checker check(facts, policy, report.findings);
  check.set_vendor(system.devices().at(device).vendor);
  check.thermal();
  check.throttling(HealthCheck::thermal_throttling, {"socket_thermal", "vr_thermal", "hbm_thermal", "prochot"},
                   kNvSwThermal | kNvHwThermal | kNvHwSlowdown, "thermal",
                   "Improve cooling; sustained thermal throttling costs performance and ages the part.");
  check.throttling(HealthCheck::power_throttling, {"ppt"}, kNvSwPowerCap | kNvPowerBrake, "power",
                   "Expected at full load; otherwise check the power cap and the node's power delivery.");
  check.power();
  check.clocks();
  check.pcie();
  check.memory();
  check.xgmi();
  check_firmware(system, device, readings, report.findings);
  check_compute_init(system, device, report.findings);  // only where another check could run
  check.plausible(readings);  // last: its pass is no sign that the GPU could be checked
  return report;
}

}  // namespace

void settle_overall(HealthReport& report) {
  const HealthTally counts = tally(report);
  // Readings that are merely possible say nothing of the GPU's health: that check's pass alone
  // leaves a GPU none of whose other checks ran UNKNOWN (its fail still fails it). No recent error
  // is no sign either.
  const std::string plausible_check(name_of(HealthCheck::readings_plausible));
  const std::string errors_check(name_of(HealthCheck::errors_recent));
  const bool vouched = std::any_of(report.findings.begin(), report.findings.end(), [&](const HealthFinding& f) {
    return f.verdict == Verdict::pass && f.check != plausible_check && f.check != errors_check;
  });
  report.overall = counts.fail > 0 ? Verdict::fail : counts.warn > 0 ? Verdict::warn : vouched ? Verdict::pass : Verdict::unknown;
}

HealthTally tally(const HealthReport& report) {
  // Severity order for "worst": unknown counts only when nothing else was evaluated.
  const auto rank = [](Verdict v) { return v == Verdict::unknown ? -1 : static_cast<int>(v); };
  std::vector<std::pair<std::string, Verdict>> checks;  // in report order
  for (const HealthFinding& f : report.findings) {
    auto it = std::find_if(checks.begin(), checks.end(), [&f](const auto& c) { return c.first == f.check; });
    if (it == checks.end()) checks.emplace_back(f.check, f.verdict);
    else if (rank(f.verdict) > rank(it->second)) it->second = f.verdict;
  }
  HealthTally t;
  for (const auto& [check, verdict] : checks) {
    switch (verdict) {
      case Verdict::pass: ++t.pass; break;
      case Verdict::warn: ++t.warn; break;
      case Verdict::fail: ++t.fail; break;
      case Verdict::unknown:
        ++t.unknown;
        t.not_checked.push_back(check);
        break;
    }
  }
  return t;
}

std::string health_summary(const HealthReport& report) {
  const HealthTally t = tally(report);
  if (t.evaluated() == 0) {
    return t.unknown == 0 ? std::string("no check could be evaluated")
                          : fmt::format("no check could be evaluated ({} not checked: {})", t.unknown, fmt::join(t.not_checked, ", "));
  }
  if (t.warn == 0 && t.fail == 0 && t.unknown == 0) return fmt::format("every check passed ({} checks)", t.pass);
  std::vector<std::string> parts;
  if (t.fail > 0) parts.push_back(fmt::format("{} failed", t.fail));
  if (t.warn > 0) parts.push_back(fmt::format("{} warned", t.warn));
  if (t.pass > 0) parts.push_back(fmt::format("{} passed", t.pass));
  std::string out = fmt::format("{}", fmt::join(parts, ", "));
  if (t.unknown > 0) out += fmt::format(", {} not checked: {}", t.unknown, fmt::join(t.not_checked, ", "));
  return out;
}

bool device_answered(const std::vector<Reading>& readings) noexcept {
  bool failed = false;
  for (const Reading& r : readings) {
    // The process list is not the GPU answering: amdgpu's comes from /proc (fdinfo), which reads
    // fine while every read of the GPU fails.
    if (r.status == Status::ok && r.id != MetricId::running_processes) return true;
    failed = failed || r.status == Status::error || r.status == Status::unavailable;
  }
  return !failed;
}

}  // namespace hipstack::smi
