// NVML answers turned into catalogue readings. Units: mW -> W, mJ -> J, KB/s -> bytes/s, PCIe
// generation -> GT/s; temperatures in °C and clocks in MHz as NVML gives them.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <cctype>
#include <cerrno>

#include "nvml_backend.hpp"

namespace hipstack::smi::detail::nvml {
namespace {

// PCIe transfer rate per lane of each generation, GT/s.
std::optional<double> generation_speed(unsigned generation) {
  constexpr std::array<double, 7> kGts = {0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  if (generation == 0 || generation >= kGts.size()) return std::nullopt;
  return kGts[generation];
}

const char* architecture_name(unsigned arch) {
  switch (arch) {
    case 2: return "kepler";
    case 3: return "maxwell";
    case 4: return "pascal";
    case 5: return "volta";
    case 6: return "turing";
    case 7: return "ampere";
    case 8: return "ada";
    case 9: return "hopper";
    case 10: return "blackwell";
    default: return nullptr;
  }
}

const char* enabled_text(int state) { return state != 0 ? "enabled" : "disabled"; }

// Calls NVML for one device and reports what it said. Every call below is its own statement,
// before the value it writes is read: as one argument list (number(id, name, call(&v), v)) the
// order of evaluation is unspecified, and GCC reads v first.
class Probe {
 public:
  Probe(const Library& lib, const NvidiaGpu& gpu, const SampleOptions& options, std::vector<Reading>& out)
      : lib_(lib), gpu_(gpu), want_(options), list_(out) {}

  ReadingList& list() { return list_; }
  const AskedFor& want() const { return want_; }
  const Api& api() const { return lib_.api(); }
  Device device() const { return gpu_.handle; }

  // The NVML function is missing from this driver's library.
  static constexpr Return kMissing = kErrorFunctionNotFound;

  template <typename Fn, typename... Args>
  Return call(Fn* fn, Args... args) const {
    return fn == nullptr ? kMissing : fn(gpu_.handle, args...);
  }
  void fail(MetricId id, const char* function, Return code, const std::string& instance = {}) {
    const std::string why = code == kMissing ? fmt::format("{}: not in {}", function, lib_.path())
                                             : fmt::format("{}: {}", function, lib_.describe(code));
    list_.failed(id, errno_for(code), why, instance);
  }
  void number(MetricId id, const char* function, Return code, double value, const std::string& instance = {}) {
    if (code != kSuccess) return fail(id, function, code, instance);
    const MetricInfo* info = find_metric(id);
    if (info != nullptr && info->type == ValueType::integer) {
      list_.integer(id, static_cast<std::int64_t>(value), function, instance);
    } else {
      list_.real(id, value, function, instance);
    }
  }
  // Calls fn(device, args..., &value) and reports value / per_unit (NVML units per catalogue unit:
  // dividing keeps 54231 mW exactly 54.231 W, multiplying by 0.001 would not). The call is its own
  // statement, sequenced before the value is read.
  template <typename T, typename... Params, typename... Args>
  void fetch(MetricId id, const char* function, Return (*fn)(Device, Params...), double per_unit, Args... args) {
    T value{};
    const Return code = call(fn, args..., &value);
    number(id, function, code, static_cast<double>(value) / per_unit);
  }
  void text(MetricId id, const char* function, Return code, std::string value, const std::string& instance = {}) {
    if (code != kSuccess) return fail(id, function, code, instance);
    list_.text(id, std::move(value), function, instance);
  }
  void string_metric(MetricId id, const char* function, Return (*fn)(Device, char*, unsigned), unsigned size) {
    std::string value;
    const Return code = fn == nullptr ? kMissing : read_string(fn, gpu_.handle, size, value);
    if (code == kSuccess && value.empty()) return list_.failed(id, ENOENT, fmt::format("{}: empty", function));
    text(id, function, code, std::move(value));
  }

 private:
  const Library& lib_;
  const NvidiaGpu& gpu_;
  AskedFor want_;
  ReadingList list_;
};


double field_number(const FieldValue& f) {
  switch (f.valueType) {
    case 0: return f.value.dVal;
    case 1: return f.value.uiVal;
    case 2: return static_cast<double>(f.value.ulVal);
    case 3: return static_cast<double>(f.value.ullVal);
    case 4: return static_cast<double>(f.value.sllVal);
    case 5: return f.value.siVal;
    case 6: return f.value.usVal;
    default: return 0;
  }
}

// The field-backed metrics asked for in one nvmlDeviceGetFieldValues call: one driver round trip
// instead of one per metric (nvidia-smi batches its queries the same way). A field the driver does
// not answer falls back to the metric's own NVML call.
class FieldBatch {
 public:
  FieldBatch(Probe& p, const std::vector<unsigned>& ids) {
    for (const unsigned id : ids) {
      FieldValue f{};
      f.fieldId = id;
      fields_.push_back(f);
    }
    if (!fields_.empty()) code_ = p.call(p.api().field_values, static_cast<int>(fields_.size()), fields_.data());
  }
  // The call's or the field's own return code.
  [[nodiscard]] Return status(unsigned id) const {
    if (code_ != kSuccess) return code_;
    for (const FieldValue& f : fields_) {
      if (f.fieldId == id) return f.nvmlReturn;
    }
    return kErrorNotSupported;
  }
  [[nodiscard]] double value(unsigned id) const {
    for (const FieldValue& f : fields_) {
      if (f.fieldId == id) return field_number(f);
    }
    return 0;
  }

 private:
  std::vector<FieldValue> fields_;
  Return code_ = kErrorNotSupported;
};

void read_memory_use(Probe& p) {
  const Api& api = p.api();
  MemoryV2 memory{};
  memory.version = kMemoryV2Version;
  const Return v2 = p.call(api.memory_v2, &memory);
  if (v2 == kSuccess) {
    p.number(MetricId::vram_used, "nvmlDeviceGetMemoryInfo_v2", v2, static_cast<double>(memory.used));
    p.number(MetricId::vram_free, "nvmlDeviceGetMemoryInfo_v2", v2, static_cast<double>(memory.free));
    p.number(MetricId::vram_reserved, "nvmlDeviceGetMemoryInfo_v2", v2, static_cast<double>(memory.reserved));
    return;
  }
  // Older drivers: no reserved memory figure.
  Memory old{};
  const Return v1 = p.call(api.memory, &old);
  p.number(MetricId::vram_used, "nvmlDeviceGetMemoryInfo", v1, static_cast<double>(old.used));
  p.number(MetricId::vram_free, "nvmlDeviceGetMemoryInfo", v1, static_cast<double>(old.free));
  p.fail(MetricId::vram_reserved, "nvmlDeviceGetMemoryInfo_v2", v2);
}

// ECC counters, retired pages (older GPUs) and remapped rows (A100 and newer).
void read_memory_errors(Probe& p, const FieldBatch& batch) {
  const Api& api = p.api();
  const struct {
    MetricId id;
    int type;
    int counter;
    unsigned field;  // NVML_FI_DEV_ECC_{SBE,DBE}_{VOL,AGG}_TOTAL
  } ecc[] = {{MetricId::ecc_corrected_volatile, kErrorCorrected, kVolatileEcc, kFieldEccSbeVolatile},
             {MetricId::ecc_uncorrected_volatile, kErrorUncorrected, kVolatileEcc, kFieldEccDbeVolatile},
             {MetricId::ecc_corrected_aggregate, kErrorCorrected, kAggregateEcc, kFieldEccSbeAggregate},
             {MetricId::ecc_uncorrected_aggregate, kErrorUncorrected, kAggregateEcc, kFieldEccDbeAggregate}};
  for (const auto& e : ecc) {
    if (batch.status(e.field) == kSuccess) {
      p.number(e.id, "nvmlDeviceGetFieldValues(ECC)", kSuccess, batch.value(e.field));
      continue;
    }
    unsigned long long count = 0;
    const Return code = p.call(api.total_ecc_errors, e.type, e.counter, &count);
    p.number(e.id, "nvmlDeviceGetTotalEccErrors", code, static_cast<double>(count));
  }
  const std::pair<const char*, int> causes[] = {{"single_bit_ecc", kRetiredMultipleSbe}, {"double_bit_ecc", kRetiredDbe}};
  for (const auto& [cause, kind] : causes) {
    unsigned count = 0;  // with a zero-sized array NVML answers the count (or INSUFFICIENT_SIZE with it)
    Return code = p.call(api.retired_pages, kind, &count, static_cast<unsigned long long*>(nullptr));
    if (code == kErrorInsufficientSize) code = kSuccess;
    p.number(MetricId::retired_pages, "nvmlDeviceGetRetiredPages", code, count, cause);
  }
  unsigned corrected = 0;
  unsigned uncorrected = 0;
  unsigned pending = 0;
  unsigned failed = 0;
  const Return rows = p.call(api.remapped_rows, &corrected, &uncorrected, &pending, &failed);
  p.number(MetricId::remapped_rows, "nvmlDeviceGetRemappedRows", rows, corrected, "correctable");
  p.number(MetricId::remapped_rows, "nvmlDeviceGetRemappedRows", rows, uncorrected, "uncorrectable");
  p.number(MetricId::remapped_rows_pending, "nvmlDeviceGetRemappedRows", rows, pending != 0 ? 1 : 0);
  p.number(MetricId::remapped_rows_failed, "nvmlDeviceGetRemappedRows", rows, failed != 0 ? 1 : 0);
}

// Each NVLink's state, until the device has no more links.
void read_nvlinks(Probe& p) {
  bool any_link = false;
  Return code = Probe::kMissing;
  for (unsigned link = 0; link < kNvlinkMaxLinks; ++link) {
    EnableState active = 0;
    code = p.call(p.api().nvlink_state, link, &active);
    if (code == kErrorInvalidArgument || code == kErrorNotSupported || code == Probe::kMissing) break;
    any_link = true;
    p.text(MetricId::nvlink_state, "nvmlDeviceGetNvLinkState", code, active != 0 ? "active" : "inactive",
           std::to_string(link));
  }
  if (!any_link) {
    p.fail(MetricId::nvlink_state, "nvmlDeviceGetNvLinkState", code == kErrorInvalidArgument ? kErrorNotSupported : code);
  }
}

}  // namespace

Return read_string(Return (*fn)(Device, char*, unsigned), Device device, unsigned size, std::string& out) {
  std::vector<char> buffer(size + 1, '\0');
  const Return code = fn(device, buffer.data(), size);
  if (code == kSuccess) out.assign(buffer.data());
  return code;
}

void read_identity(const Library& lib, const NvidiaGpu& gpu, const SampleOptions& options, std::vector<Reading>& out) {
  Probe p(lib, gpu, options, out);
  const Api& api = p.api();
  const AskedFor& want = p.want();
  p.list().text(MetricId::vendor, "nvidia", "NVML");
  p.list().text(MetricId::uuid, gpu.uuid, "nvmlDeviceGetUUID");
  p.list().text(MetricId::marketing_name, gpu.name, "nvmlDeviceGetName");
  p.list().text(MetricId::driver_name, "nvidia", "NVML");
  if (want({MetricId::bdf, MetricId::pci_vendor_id, MetricId::pci_device_id, MetricId::pci_subsystem_vendor_id,
            MetricId::pci_subsystem_device_id})) {
    PciInfo pci{};
    const Return pci_code = p.call(api.pci_info, &pci);
    p.text(MetricId::bdf, "nvmlDeviceGetPciInfo", pci_code, pci_code == kSuccess ? normalise_bdf(pci.busId) : "");
    p.text(MetricId::pci_vendor_id, "nvmlDeviceGetPciInfo", pci_code, fmt::format("0x{:04x}", pci.pciDeviceId & 0xffff));
    p.text(MetricId::pci_device_id, "nvmlDeviceGetPciInfo", pci_code, fmt::format("0x{:04x}", pci.pciDeviceId >> 16));
    p.text(MetricId::pci_subsystem_vendor_id, "nvmlDeviceGetPciInfo", pci_code,
           fmt::format("0x{:04x}", pci.pciSubSystemId & 0xffff));
    p.text(MetricId::pci_subsystem_device_id, "nvmlDeviceGetPciInfo", pci_code,
           fmt::format("0x{:04x}", pci.pciSubSystemId >> 16));
  }
  if (want({MetricId::serial_number})) p.string_metric(MetricId::serial_number, "nvmlDeviceGetSerial", api.serial, kSerialSize);
  if (want({MetricId::product_number})) {
    p.string_metric(MetricId::product_number, "nvmlDeviceGetBoardPartNumber", api.part_number, kPartNumberSize);
  }
  if (want({MetricId::vbios_version})) {
    p.string_metric(MetricId::vbios_version, "nvmlDeviceGetVbiosVersion", api.vbios_version, kVbiosSize);
  }
  if (want({MetricId::driver_version})) {
    std::array<char, kDriverVersionSize + 1> driver{};
    const Return driver_code =
        api.driver_version == nullptr ? Probe::kMissing : api.driver_version(driver.data(), kDriverVersionSize);
    p.text(MetricId::driver_version, "nvmlSystemGetDriverVersion", driver_code, driver.data());
  }
  if (want({MetricId::cuda_driver_version})) {
    int cuda = 0;
    const Return cuda_code = api.cuda_version == nullptr ? Probe::kMissing : api.cuda_version(&cuda);
    p.text(MetricId::cuda_driver_version, "nvmlSystemGetCudaDriverVersion", cuda_code,
           fmt::format("{}.{}", cuda / 1000, (cuda % 1000) / 10));
  }
  if (want({MetricId::compute_capability, MetricId::gfx_target})) {
    int major = 0;
    int minor = 0;
    const Return cc_code = p.call(api.compute_capability, &major, &minor);
    p.text(MetricId::compute_capability, "nvmlDeviceGetCudaComputeCapability", cc_code, fmt::format("{}.{}", major, minor));
    // The compiler target, as gfx942 is for AMD: nvcc -arch=sm_90.
    p.text(MetricId::gfx_target, "nvmlDeviceGetCudaComputeCapability", cc_code, fmt::format("sm_{}{}", major, minor));
  }
  if (want({MetricId::architecture})) {
    unsigned arch = 0;
    const Return arch_code = p.call(api.architecture, &arch);
    if (arch_code == kSuccess && architecture_name(arch) == nullptr) {
      p.list().failed(MetricId::architecture, ENOENT, fmt::format("nvmlDeviceGetArchitecture: unknown value {}", arch));
    } else {
      p.text(MetricId::architecture, "nvmlDeviceGetArchitecture", arch_code, arch_code == kSuccess ? architecture_name(arch) : "");
    }
  }
  if (want({MetricId::device_minor})) p.fetch<unsigned>(MetricId::device_minor, "nvmlDeviceGetMinorNumber", api.minor_number, 1.0);
  p.list().text(MetricId::device_type, "discrete", "NVML");
}

namespace {

// ECC, MIG, persistence, display and compute modes.
void read_modes(Probe& p) {
  const Api& api = p.api();
  const AskedFor& want = p.want();
  EnableState current = 0;
  EnableState pending = 0;
  // One call answers the mode now and the mode after the next reset.
  if (want({MetricId::ecc_mode, MetricId::ecc_mode_pending})) {
    const Return code = p.call(api.ecc_mode, &current, &pending);
    if (want({MetricId::ecc_mode})) p.text(MetricId::ecc_mode, "nvmlDeviceGetEccMode", code, enabled_text(current));
    if (want({MetricId::ecc_mode_pending})) p.text(MetricId::ecc_mode_pending, "nvmlDeviceGetEccMode", code, enabled_text(pending));
  }
  if (want({MetricId::mig_mode, MetricId::mig_mode_pending})) {
    unsigned mig_current = 0;
    unsigned mig_pending = 0;
    const Return code = p.call(api.mig_mode, &mig_current, &mig_pending);
    if (want({MetricId::mig_mode})) p.text(MetricId::mig_mode, "nvmlDeviceGetMigMode", code, enabled_text(static_cast<int>(mig_current)));
    if (want({MetricId::mig_mode_pending})) {
      p.text(MetricId::mig_mode_pending, "nvmlDeviceGetMigMode", code, enabled_text(static_cast<int>(mig_pending)));
    }
  }
  if (want({MetricId::mig_device_slots})) p.fetch<unsigned>(MetricId::mig_device_slots, "nvmlDeviceGetMaxMigDeviceCount", api.max_mig_devices, 1);
  if (want({MetricId::persistence_mode})) {
    const Return code = p.call(api.persistence_mode, &current);
    p.text(MetricId::persistence_mode, "nvmlDeviceGetPersistenceMode", code, enabled_text(current));
  }
  if (want({MetricId::display_active})) {
    const Return code = p.call(api.display_active, &current);
    p.text(MetricId::display_active, "nvmlDeviceGetDisplayActive", code, enabled_text(current));
  }
  if (want({MetricId::compute_mode})) {
    int mode = 0;
    const Return code = p.call(api.compute_mode, &mode);
    const char* mode_name = mode == 0 ? "default" : mode == 2 ? "prohibited" : mode == 3 ? "exclusive_process" : "exclusive_thread";
    p.text(MetricId::compute_mode, "nvmlDeviceGetComputeMode", code, mode_name);
  }
}

}  // namespace

void read_static(const Library& lib, const NvidiaGpu& gpu, const SampleOptions& options, std::vector<Reading>& out) {
  Probe p(lib, gpu, options, out);
  const Api& api = p.api();
  const AskedFor& want = p.want();
  if (want({MetricId::vram_total})) {
    MemoryV2 memory{};
    memory.version = kMemoryV2Version;
    Return memory_code = p.call(api.memory_v2, &memory);
    if (memory_code != kSuccess) {
      Memory old{};
      memory_code = p.call(api.memory, &old);
      memory.total = old.total;
    }
    p.number(MetricId::vram_total, "nvmlDeviceGetMemoryInfo", memory_code, static_cast<double>(memory.total));
  }
  if (want({MetricId::bar1_total})) {
    Bar1Memory bar1{};
    const Return code = p.call(api.bar1_memory, &bar1);
    p.number(MetricId::bar1_total, "nvmlDeviceGetBAR1MemoryInfo", code, static_cast<double>(bar1.bar1Total));
  }
  if (want({MetricId::compute_units})) {
    DeviceAttributes attributes{};
    const Return code = p.call(api.attributes, &attributes);
    p.number(MetricId::compute_units, "nvmlDeviceGetAttributes", code, attributes.multiprocessorCount);
  }
  p.list().integer(MetricId::wavefront_size, 32, "CUDA warp size (every NVIDIA GPU)");

  const std::pair<MetricId, int> max_clocks[] = {{MetricId::clock_sclk_max, kClockGraphics},
                                                 {MetricId::clock_mclk_max, kClockMem},
                                                 {MetricId::clock_sm_max, kClockSm},
                                                 {MetricId::clock_video_max, kClockVideo}};
  for (const auto& [id, type] : max_clocks) {
    if (want({id})) p.fetch<unsigned>(id, "nvmlDeviceGetMaxClockInfo", api.max_clock, 1.0, type);
  }
  if (want({MetricId::power_cap_min, MetricId::power_cap_max})) {
    unsigned low = 0;
    unsigned high = 0;
    const Return constraints = p.call(api.power_limit_constraints, &low, &high);
    p.number(MetricId::power_cap_min, "nvmlDeviceGetPowerManagementLimitConstraints", constraints, low / 1000.0);
    p.number(MetricId::power_cap_max, "nvmlDeviceGetPowerManagementLimitConstraints", constraints, high / 1000.0);
  }
  if (want({MetricId::power_cap_default})) {
    p.fetch<unsigned>(MetricId::power_cap_default, "nvmlDeviceGetPowerManagementDefaultLimit", api.power_limit_default, 1000.0);  // mW
  }
  if (want({MetricId::power_cap})) {
    p.fetch<unsigned>(MetricId::power_cap, "nvmlDeviceGetEnforcedPowerLimit", api.power_limit_enforced, 1000.0);  // mW
  }
  if (want({MetricId::pcie_speed_max})) {
    unsigned generation = 0;
    const Return gen_code = p.call(api.max_pcie_generation, &generation);
    if (gen_code == kSuccess && !generation_speed(generation)) {
      p.list().malformed(MetricId::pcie_speed_max, fmt::format("nvmlDeviceGetMaxPcieLinkGeneration: generation {}", generation));
    } else {
      p.number(MetricId::pcie_speed_max, "nvmlDeviceGetMaxPcieLinkGeneration", gen_code, generation_speed(generation).value_or(0));
    }
  }
  if (want({MetricId::pcie_width_max})) p.fetch<unsigned>(MetricId::pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth", api.max_pcie_width, 1.0);
  if (want({MetricId::numa_node})) p.fetch<unsigned>(MetricId::numa_node, "nvmlDeviceGetNumaNodeId", api.numa_node, 1.0);

  const std::pair<MetricId, int> thresholds[] = {{MetricId::temperature_junction_critical, kThresholdSlowdown},
                                                 {MetricId::temperature_junction_emergency, kThresholdShutdown},
                                                 {MetricId::temperature_memory_critical, kThresholdMemMax}};
  for (const auto& [id, type] : thresholds) {
    if (want({id})) p.fetch<unsigned>(id, "nvmlDeviceGetTemperatureThreshold", api.temperature_threshold, 1.0, type);
  }
  read_modes(p);
}

namespace {

// Clocks, and how busy the engines are (NVML's utilisation, encoder, decoder).
void read_clocks_and_use(Probe& p) {
  const Api& api = p.api();
  const AskedFor& want = p.want();
  unsigned value = 0;
  const std::pair<MetricId, int> clocks[] = {{MetricId::clock_sclk, kClockGraphics},
                                             {MetricId::clock_sm, kClockSm},
                                             {MetricId::clock_mclk, kClockMem},
                                             {MetricId::clock_video, kClockVideo}};
  for (const auto& [id, type] : clocks) {
    if (!want({id})) continue;
    const Return code = p.call(api.clock, type, &value);
    p.number(id, "nvmlDeviceGetClockInfo", code, value);
  }
  if (want({MetricId::gpu_busy, MetricId::memory_busy})) {
    Utilization utilization{};
    const Return code = p.call(api.utilization, &utilization);
    p.number(MetricId::gpu_busy, "nvmlDeviceGetUtilizationRates", code, utilization.gpu);
    p.number(MetricId::memory_busy, "nvmlDeviceGetUtilizationRates", code, utilization.memory);
  }
  unsigned period = 0;
  if (want({MetricId::encoder_busy})) {
    const Return code = p.call(api.encoder_utilization, &value, &period);
    p.number(MetricId::encoder_busy, "nvmlDeviceGetEncoderUtilization", code, value);
  }
  if (want({MetricId::decoder_busy})) {
    const Return code = p.call(api.decoder_utilization, &value, &period);
    p.number(MetricId::decoder_busy, "nvmlDeviceGetDecoderUtilization", code, value);
  }
}

// Fan, performance state, throttling and the time spent limited per reason.
void read_limits(Probe& p) {
  const Api& api = p.api();
  const AskedFor& want = p.want();
  unsigned value = 0;
  if (want({MetricId::fan_pwm})) {
    // NVML's fan speed is the intended speed as a share of the maximum: our fan_pwm.
    const Return code = p.call(api.fan_speed, &value);
    p.number(MetricId::fan_pwm, "nvmlDeviceGetFanSpeed", code, value);
  }
  if (want({MetricId::performance_state})) {
    int pstate = 0;
    const Return code = p.call(api.performance_state, &pstate);
    if (code == kSuccess && (pstate < 0 || pstate > 15)) {
      p.list().failed(MetricId::performance_state, ENOENT, "nvmlDeviceGetPerformanceState: unknown");
    } else {
      p.text(MetricId::performance_state, "nvmlDeviceGetPerformanceState", code, fmt::format("P{}", pstate));
    }
  }
  if (want({MetricId::throttle_status})) {
    unsigned long long reasons = 0;
    const Return code = p.call(api.clock_event_reasons, &reasons);
    p.number(MetricId::throttle_status, "nvmlDeviceGetCurrentClocksEventReasons", code, static_cast<double>(reasons));
  }
  if (want({MetricId::violation_time})) {
    // nvmlPerfPolicyType_t: 0-5 the limiters, 10 and 11 the totals below application and base clocks.
    constexpr std::pair<int, const char*> kPolicies[] = {{0, "power"},           {1, "thermal"},
                                                         {2, "sync_boost"},      {3, "board_limit"},
                                                         {4, "low_utilization"}, {5, "reliability"},
                                                         {10, "total_app_clocks"}, {11, "total_base_clocks"}};
    for (const auto& [policy, reason] : kPolicies) {
      ViolationTime time{};
      const Return code = p.call(api.violation_status, policy, &time);
      p.number(MetricId::violation_time, "nvmlDeviceGetViolationStatus", code, static_cast<double>(time.violationTime) / 1e9, reason);
    }
  }
}

// The PCIe link now, its throughput (on request) and replays.
void read_pcie(Probe& p, const SampleOptions& options) {
  const Api& api = p.api();
  const AskedFor& want = p.want();
  if (want({MetricId::pcie_speed})) {
    unsigned generation = 0;
    const Return code = p.call(api.pcie_generation, &generation);
    p.number(MetricId::pcie_speed, "nvmlDeviceGetCurrPcieLinkGeneration",
             code == kSuccess && !generation_speed(generation) ? kErrorUnknown : code,
             generation_speed(generation).value_or(0));
  }
  if (want({MetricId::pcie_width})) {
    p.fetch<unsigned>(MetricId::pcie_width, "nvmlDeviceGetCurrPcieLinkWidth", api.pcie_width, 1.0);
  }
  if (options.pcie_throughput && want({MetricId::pcie_rx, MetricId::pcie_tx})) {
    // NVML counts bytes over a 20 ms window per call: opt-in, as amdgpu's pcie_bw is.
    const std::pair<MetricId, int> directions[] = {{MetricId::pcie_rx, kPcieRxBytes}, {MetricId::pcie_tx, kPcieTxBytes}};
    for (const auto& [id, counter] : directions) {
      p.fetch<unsigned>(id, "nvmlDeviceGetPcieThroughput", api.pcie_throughput, 1.0 / 1024, counter);  // KB/s (1/1024 is exact)
    }
  } else if (want({MetricId::pcie_rx, MetricId::pcie_tx})) {
    p.list().failed(MetricId::pcie_rx, ENOENT, "opt-in: nvmlDeviceGetPcieThroughput samples for 20 ms");
    p.list().failed(MetricId::pcie_tx, ENOENT, "opt-in: nvmlDeviceGetPcieThroughput samples for 20 ms");
  }
  if (want({MetricId::pcie_replay_count})) {
    p.fetch<unsigned>(MetricId::pcie_replay_count, "nvmlDeviceGetPcieReplayCounter", api.pcie_replay_counter, 1.0);
  }
}

}  // namespace

void read_live(const Library& lib, const NvidiaGpu& gpu, const SampleOptions& options, std::vector<Reading>& out) {
  Probe p(lib, gpu, options, out);
  const Api& api = p.api();
  const AskedFor& want = p.want();
  if (want({MetricId::temperature_junction})) {
    p.fetch<unsigned>(MetricId::temperature_junction, "nvmlDeviceGetTemperature", api.temperature, 1.0, kTemperatureGpu);
  }
  const bool memory_errors =
      want({MetricId::ecc_corrected_volatile, MetricId::ecc_uncorrected_volatile, MetricId::ecc_corrected_aggregate,
            MetricId::ecc_uncorrected_aggregate, MetricId::retired_pages, MetricId::remapped_rows,
            MetricId::remapped_rows_pending, MetricId::remapped_rows_failed});
  std::vector<unsigned> field_ids;
  if (want({MetricId::temperature_memory})) field_ids.push_back(kFieldMemoryTemperature);
  if (want({MetricId::power_current})) field_ids.push_back(kFieldPowerInstant);
  // Energy and PCIe replays are not batched: as field values they cost more than their own calls
  // (on H200s, a second apart: 3.7 against 3.3 ms, 0.8 against 0.4 ms; docs/performance.md).
  if (memory_errors) {
    field_ids.insert(field_ids.end(), {kFieldEccSbeVolatile, kFieldEccDbeVolatile, kFieldEccSbeAggregate, kFieldEccDbeAggregate});
  }
  const FieldBatch batch(p, field_ids);
  // Memory temperature and instantaneous power exist only as field values.
  if (want({MetricId::temperature_memory})) {
    p.number(MetricId::temperature_memory, "nvmlDeviceGetFieldValues(MEMORY_TEMP)", batch.status(kFieldMemoryTemperature),
             batch.value(kFieldMemoryTemperature));
  }
  if (want({MetricId::power_current})) {
    p.number(MetricId::power_current, "nvmlDeviceGetFieldValues(POWER_INSTANT)", batch.status(kFieldPowerInstant),
             batch.value(kFieldPowerInstant) / 1000.0);
  }
  if (want({MetricId::power_average})) {
    p.fetch<unsigned>(MetricId::power_average, "nvmlDeviceGetPowerUsage", api.power_usage, 1000.0);  // mW
  }
  if (want({MetricId::energy_consumed})) {
    unsigned long long energy = 0;
    const Return code = p.call(api.total_energy, &energy);
    p.number(MetricId::energy_consumed, "nvmlDeviceGetTotalEnergyConsumption", code, static_cast<double>(energy) / 1000.0);
  }
  read_clocks_and_use(p);
  if (want({MetricId::vram_used, MetricId::vram_free, MetricId::vram_reserved})) read_memory_use(p);
  if (want({MetricId::bar1_used})) {
    Bar1Memory bar1{};
    const Return code = p.call(api.bar1_memory, &bar1);
    p.number(MetricId::bar1_used, "nvmlDeviceGetBAR1MemoryInfo", code, static_cast<double>(bar1.bar1Used));
  }
  read_limits(p);
  read_pcie(p, options);
  if (memory_errors) read_memory_errors(p, batch);
  if (want({MetricId::nvlink_state})) read_nvlinks(p);
}

}  // namespace hipstack::smi::detail::nvml
