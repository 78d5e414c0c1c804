// NVIDIA's XID catalogue as data (hipstack/gpu_errors.hpp, docs/errors.md). Facts from NVIDIA's
// "Analyzing Xid Errors with the Xid Catalog" (docs.nvidia.com/deploy/xid-errors/
// analyzing-xid-catalog.html, read 2026-12): mnemonic, description, "Applies to", and the two
// "Resolution Bucket" columns as written. The fault is NVIDIA's trigger text where it names one
// (13, 31, 43: the application; 32: PCIe quality; 79: the PCIe link or the GPU), else the first cause
// class of NVIDIA's archived "Xid Errors" table (docs.nvidia.com/deploy/xid-errors/archive/).
// Codes the catalogue marks "Unused" are kept: a newer driver on an older GPU may still send them.
#include <hipstack/gpu_errors.hpp>

#include <hipstack/events.hpp>

#include "action_text.hpp"

#include <algorithm>
#include <array>
#include <charconv>

namespace hipstack::smi {
namespace {

using F = ErrorFault;

constexpr std::uint8_t kAll = xid_a100 | xid_h100 | xid_b100 | xid_gb200;
constexpr std::uint8_t kNone = 0;
constexpr std::uint8_t kBlackwell = xid_b100 | xid_gb200;
constexpr std::uint8_t kNotA100 = xid_h100 | xid_b100 | xid_gb200;

constexpr std::string_view kUnused = "Unused";
constexpr std::string_view kUnusedAction = "N/A; Unused";
constexpr std::string_view kNvlink5 =
    "the action depends on the message's intrInfo and errorStatus (NVIDIA's \"Xid 144-150 Decode\" sheet), which NVML's "
    "event does not carry: read the kernel log";

// By code, ascending (find_xid searches it in halves; a static_assert below keeps the order).
constexpr XidInfo kXids[] = {
    {8, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", "GPU stopped processing", "RESTART_APP", "CONTACT_SUPPORT", F::driver, kAll, ""},
    {13, "ROBUST_CHANNEL_GR_EXCEPTION", "Graphics Engine Exception", "RESTART_APP", "WORKFLOW_XID_13", F::application, kAll,
     "usually the application's fault: an out-of-range access, an illegal instruction or register"},
    {31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault", "RESTART_APP", "WORKFLOW_XID_31", F::application, kAll,
     "an illegal address access: usually the application's bug"},
    {32, "ROBUST_CHANNEL_PBDMA_ERROR", "Invalid or corrupted push buffer stream", "RESTART_APP", "CHECK_APP/CUDA", F::system, kAll,
     "mostly the quality of the PCIe link, not the application"},
    {38, "ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT", "Driver firmware error", "IGNORE", "CONTACT_SUPPORT", F::driver, kAll, ""},
    {43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "GPU stopped processing", "IGNORE", "CONTACT_SUPPORT", F::application, kAll,
     "the application hit a software fault and had to end; the GPU stays healthy"},
    {44, "ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW", "Graphics Engine fault during context switch", "IGNORE", "CONTACT_SUPPORT",
     F::driver, kAll, ""},
    {45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", "Preemptive cleanup, due to previous errors", "WORKFLOW_XID_45",
     "Solo: RESTART_FM Not Solo: IGNORE (follow other Xid)", F::informational, kAll,
     "the driver ended an application's channels: after another error (act on that one) or when it was stopped"},
    {46, "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR", "GPU stopped processing", "RESET_GPU", "CONTACT_SUPPORT", F::driver, kAll, ""},
    {48, "ROBUST_CHANNEL_GPU_ECC_DBE", "Double Bit ECC Error", "WORKFLOW_XID_48", "WORKFLOW_XID_48", F::hardware, kAll,
     "alone: reset the GPU; with XID 63 or 64: drain and reset; again: field diagnostics"},
    {54, "SILENT_RUNNING_PWR_REDUCED_CLOCKING", "Auxiliary power is not connected to the GPU board", "CHECK_MECHANICALS",
     "CONTACT_SUPPORT", F::system, xid_a100 | xid_h100 | xid_b100, ""},
    {56, "DISPLAY_CHANNEL_EXCEPTION", kUnused, "CONTACT_SUPPORT", kUnusedAction, F::hardware, kNone, ""},
    {57, "FB_LINK_TRAINING_FAILURE_ERROR", kUnused, "CONTACT_SUPPORT", kUnusedAction, F::hardware, kNone, ""},
    {58, "FB_MEMORY_ERROR", kUnused, "CONTACT_SUPPORT", kUnusedAction, F::hardware, kNone, ""},
    {61, "PMU_BREAKPOINT", kUnused, "CONTACT_SUPPORT", kUnusedAction, F::driver, kNone, ""},
    {62, "PMU_HALT_ERROR", "Internal micro-controller halt", "RESET_GPU", "CONTACT_SUPPORT", F::hardware, kAll, ""},
    {63, "INFOROM_DRAM_RETIREMENT_EVENT", "GPU memory remapping event", "IGNORE", "IGNORE", F::hardware, kAll,
     "a row remapping recorded; it takes effect at the next GPU reset"},
    {64, "INFOROM_DRAM_RETIREMENT_FAILURE", "GPU memory remapping failure", "RESET_GPU", "CONTACT_SUPPORT", F::hardware, kAll, ""},
    {65, "ROBUST_CHANNEL_NVENC1_ERROR", kUnused, "CONTACT_SUPPORT", kUnusedAction, F::hardware, kNone, ""},
    {68, "ROBUST_CHANNEL_NVDEC0_ERROR", "NVDEC0 Exception", "RESTART_APP", "CONTACT_SUPPORT", F::hardware, kAll, ""},
    {69, "ROBUST_CHANNEL_GR_CLASS_ERROR", "Graphics Engine class error", "RESTART_APP", "CHECK_APP/CUDA", F::application, kAll, ""},
    {73, "ROBUST_CHANNEL_NVENC2_ERROR", kUnused, "CONTACT_SUPPORT", kUnusedAction, F::hardware, kNone, ""},
    {74, "NVLINK_ERROR", "NVLINK Error", "WORKFLOW_NVLINK_ERR", "CONTACT_SUPPORT", F::hardware, xid_a100 | xid_h100,
     "a GPU reset or a node reboot clears it; the link or the device at its other end"},
    {79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "GPU has fallen off the bus", "RESTART_BM", "CONTACT_SUPPORT", F::hardware,
     kAll, "the GPU no longer answers on PCIe: often the link, else the GPU or the driver"},
    {80, "PBDMA_PUSHBUFFER_CRC_MISMATCH", "Corrupted data sent to GPU", "RESTART_APP", "CHECK_APP/CUDA", F::system,
     xid_a100 | xid_h100, ""},
    {81, "ROBUST_CHANNEL_VGA_SUBSYSTEM_ERROR", kUnused, "CONTACT_SUPPORT", kUnusedAction, F::hardware, kNone, ""},
    {92, "EXCESSIVE_SBE_INTERRUPTS", "High single-bit ECC error rate", "IGNORE", "CONTACT_SUPPORT", F::hardware, kAll, ""},
    {94, "ROBUST_CHANNEL_CONTAINED_ERROR", "Contained memory error", "RESTART_APP", "IGNORE (sympathetic)", F::hardware, kAll,
     "contained to one application, which must restart; reset the GPU when convenient"},
    {95, "ROBUST_CHANNEL_UNCONTAINED_ERROR", "Uncontained memory error", "RESET_GPU", "IGNORE (sympathetic)", F::hardware, kAll,
     "affects every application on the GPU: reset it before they restart"},
    {109, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", "Context Switch Timeout Error", "RESET_GPU", "CONTACT_SUPPORT", F::driver, kAll, ""},
    {110, "SEC_FAULT_ERROR", "Security Fault Error", "RESET_GPU", "INVESTIGATE_SW", F::hardware, kNotA100,
     "uncommon unless the hardware failed"},
    {119, "GSP_RPC_TIMEOUT", "GSP RPC Timeout", "RESET_GPU", "INVESTIGATE_SW", F::driver, kAll, ""},
    {120, "GSP_ERROR", "GSP Error", "RESET_GPU", "INVESTIGATE_SW", F::driver, kAll, ""},
    {121, "C2C_ERROR", "C2C Error", "IGNORE", "CONTACT_SUPPORT", F::hardware, xid_gb200,
     "corrected errors on the link to the Grace CPU; retrain it with a GPU reset in a service window"},
    {122, "SPI_PMU_RPC_READ_FAIL", kUnused, "CONTACT_SUPPORT", kUnusedAction, F::hardware, kNone, ""},
    {123, "SPI_PMU_RPC_WRITE_FAIL", kUnused, "CONTACT_SUPPORT", kUnusedAction, F::hardware, kNone, ""},
    {136, "ALI_TRAINING_FAIL", "Link Training Failed", "RESET_GPU", "INVESTIGATE_LINK_SI", F::hardware, xid_h100, ""},
    {140, "UNRECOVERABLE_ECC_ERROR_ESCAPE", "ECC Unrecovered Error", "RESET_GPU", "CONTACT_SUPPORT", F::hardware, kAll,
     "uncorrectable memory errors the driver could not retire or remap"},
    {143, "GPU_INIT_ERROR", "GPU Initialization Error", "RESET_GPU", "CONTACT_SUPPORT", F::hardware, kNotA100, ""},
    {144, "NVLINK_SAW_ERROR", "NVLINK: SAW Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", F::hardware, kBlackwell, kNvlink5},
    {145, "NVLINK_RLW_ERROR", "NVLINK: RLW Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", F::hardware, kBlackwell, kNvlink5},
    {146, "NVLINK_TLW_ERROR", "NVLINK: TLW Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", F::hardware, kBlackwell, kNvlink5},
    {147, "NVLINK_TREX_ERROR", "NVLINK: TREX Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", F::hardware, kBlackwell, kNvlink5},
    {148, "NVLINK_NVLPW_CTRL_ERROR", "NVLINK: NVLPW_CTRL Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", F::hardware,
     kBlackwell, kNvlink5},
    {149, "NVLINK_NETIR_ERROR", "NVLINK: NETIR Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", F::hardware, kBlackwell,
     kNvlink5},
    {150, "NVLINK_MSE_ERROR", "NVLINK: MSE Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", F::hardware, kBlackwell, kNvlink5},
    {151, "ROBUST_CHANNEL_KEY_ROTATION_ERROR", "Key rotation Error", "RESTART_VM", "CONTACT_SUPPORT", F::driver, kNotA100, ""},
    {152, "ROBUST_CHANNEL_DLA_SMMU_ERROR", "DLA SMMU Error", "IGNORE", "CONTACT_SUPPORT", F::driver, kNone, ""},
    {153, "ROBUST_CHANNEL_DLA_TIMEOUT", "DLA timeout Error", "IGNORE", "CONTACT_SUPPORT", F::driver, kNone, ""},
    {154, "GPU_RECOVERY_ACTION_CHANGED", "GPU Recovery Action Changed", "XID_154", "N/A Informational only regarding another Xid",
     F::informational, kAll, "names the recovery action the other XIDs need (GPU reset, node reboot, drain)"},
    {155, "NVLINK_SW_DEFINED_ERROR", "NVLINK: SW Defined Error", "RESET_GPU", "INVESTIGATE_SW_USER", F::system, kBlackwell,
     "a link taken down on purpose (sleep, disable)"},
    {156, "RESOURCE_RETIREMENT_EVENT", "Resource Retirement Event", "RESET_GPU", "IGNORE", F::hardware, kNotA100, ""},
    {157, "RESOURCE_RETIREMENT_FAILURE", "Resource Retirement Failure", "IGNORE", "CONTACT_SUPPORT", F::hardware, kNotA100,
     "no repair left: work still runs but may meet the same error"},
    {158, "GPU_FATAL_TIMEOUT", "GPU Fatal Timeout", "RESET_GPU", "CONTACT_SUPPORT", F::unknown, kAll, ""},
    {159, "ROBUST_CHANNEL_CHI_NON_DATA_ERROR", "CHI Non-Data Error", "CHECK_UVM", "SYMPATHETIC_REPORT_SOLO", F::hardware, kBlackwell,
     "with UVM or vGPU in use reset the GPU, else nothing"},
    {160, "CHANNEL_RETIREMENT_EVENT", "Channel Retirement Event", "IGNORE", "INVESTIGATE_SW", F::driver, kBlackwell, ""},
    {161, "CHANNEL_RETIREMENT_FAILURE", "Channel Retirement Failure", "IGNORE", "INVESTIGATE_SW", F::driver, kBlackwell, ""},
    {171, "UNCORRECTABLE_DRAM_ERROR", "Uncorrectable DRAM error (with XID 48)", "", "", F::hardware, kNone,
     "the catalogue names no action; XID 48 beside it does"},
    {172, "UNCORRECTABLE_SRAM_ERROR", "Uncorrectable SRAM error (with XID 48)", "", "", F::hardware, kNone,
     "the catalogue names no action; XID 48 beside it does"},
};

constexpr bool by_code() {
  for (std::size_t i = 1; i < std::size(kXids); ++i) {
    if (kXids[i - 1].code >= kXids[i].code) return false;
  }
  return true;
}
static_assert(by_code(), "kXids must be sorted by code, each code once");

// NVIDIA's resolution buckets in one word, as the immediate action and as the investigatory one
// (the same but for XID 48's workflow: reset alone, field diagnostics when it recurs).
struct Bucket {
  std::string_view name;
  ErrorAction immediate;
  ErrorAction investigatory;
};
constexpr Bucket same(std::string_view name, ErrorAction action) { return {name, action, action}; }
constexpr Bucket kBuckets[] = {
    same("IGNORE", ErrorAction::none),
    same("IGNORE (sympathetic)", ErrorAction::none),
    same("SYMPATHETIC_REPORT_SOLO", ErrorAction::none),
    same("N/A Informational only regarding another Xid", ErrorAction::none),
    same("N/A; Unused", ErrorAction::none),
    same("RESTART_APP", ErrorAction::restart_app),
    same("CHECK_APP/CUDA", ErrorAction::investigate_software),
    same("INVESTIGATE_SW", ErrorAction::investigate_software),
    same("INVESTIGATE_SW_USER", ErrorAction::investigate_software),
    same("WORKFLOW_XID_13", ErrorAction::investigate_software),
    same("WORKFLOW_XID_31", ErrorAction::investigate_software),
    same("WORKFLOW_XID_45", ErrorAction::see_other),
    same("Solo: RESTART_FM Not Solo: IGNORE (follow other Xid)", ErrorAction::see_other),
    same("XID_154", ErrorAction::see_other),
    same("UPDATE_SWFW", ErrorAction::update_software),
    same("RESET_GPU", ErrorAction::reset_gpu),
    {"WORKFLOW_XID_48", ErrorAction::reset_gpu, ErrorAction::contact_support},
    same("WORKFLOW_NVLINK_ERR", ErrorAction::reset_gpu),
    same("RESTART_BM", ErrorAction::reboot_node),
    same("RESTART_VM", ErrorAction::reboot_node),
    same("CHECK_MECHANICALS", ErrorAction::check_hardware),
    same("INVESTIGATE_LINK_SI", ErrorAction::check_hardware),
    same("CONTACT_SUPPORT", ErrorAction::contact_support),
    same("WORKFLOW_NVLINK5_ERR", ErrorAction::unknown),
    same("CHECK_UVM", ErrorAction::unknown),
};

constexpr const Bucket* known_bucket(std::string_view name) {
  for (const Bucket& b : kBuckets) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

constexpr bool every_bucket_known() {
  for (const XidInfo& x : kXids) {
    if (!x.immediate.empty() && known_bucket(x.immediate) == nullptr) return false;
    if (!x.investigatory.empty() && known_bucket(x.investigatory) == nullptr) return false;
  }
  return true;
}
static_assert(every_bucket_known(), "a row names a resolution bucket kBuckets does not map");

struct ActionName {
  ErrorAction action;
  std::string_view name;
  std::string_view help;
};
constexpr ActionName kActions[] = {
    {ErrorAction::none, "none", "nothing to do on the node"},
    {ErrorAction::investigate_software, "investigate_software", "look into the application or the driver; the GPU is fine"},
    {ErrorAction::restart_app, "restart_app", "restart the application; the GPU stays in service"},
    {ErrorAction::see_other, "see_other", "act on the error it came with"},
    {ErrorAction::update_software, "update_software", "update the driver and firmware"},
    {ErrorAction::reset_gpu, "reset_gpu", "drain the GPU's work and reset it"},
    {ErrorAction::drain_and_reset, "drain_and_reset", "drain the node, then reset its GPUs"},
    {ErrorAction::reboot_node, "reboot_node", "drain the node and reboot it"},
    {ErrorAction::check_hardware, "check_hardware", "check the GPU's seating, power and cables"},
    {ErrorAction::contact_support, "contact_support", "run field diagnostics and contact the vendor (an RMA candidate)"},
    {ErrorAction::unknown, "unknown", "no documented action"},
};

}  // namespace

std::span<const XidInfo> xid_catalogue() noexcept { return kXids; }

const XidInfo* find_xid(std::uint32_t code) noexcept {
  const auto it = std::lower_bound(std::begin(kXids), std::end(kXids), code, [](const XidInfo& x, std::uint32_t c) { return x.code < c; });
  return it != std::end(kXids) && it->code == code ? &*it : nullptr;
}

ErrorAction bucket_action(std::string_view bucket, bool investigatory) noexcept {
  const Bucket* b = known_bucket(bucket);
  return b == nullptr ? ErrorAction::unknown : investigatory ? b->investigatory : b->immediate;
}

XidAdvice xid_advice(std::uint32_t code, std::uint32_t occurrences, bool with_remapping) noexcept {
  XidAdvice advice;
  advice.code = code;
  advice.info = find_xid(code);
  if (advice.info == nullptr) {
    advice.why = "not in NVIDIA's XID catalogue";
    advice.verdict = error_action_verdict(ErrorAction::unknown, ErrorFault::unknown);
    return advice;
  }
  const XidInfo& x = *advice.info;
  advice.action = bucket_action(x.immediate);
  advice.why = x.immediate.empty() ? "the catalogue names no action" : "NVIDIA's immediate action";
  if (code == 48 && with_remapping) {
    advice.action = ErrorAction::drain_and_reset;
    advice.why = "XID 48 with a row-remapping XID (63 or 64): NVIDIA's XID 48 workflow";
  }
  const ErrorAction again = bucket_action(x.investigatory, true);
  const bool stronger = again != ErrorAction::unknown && (advice.action == ErrorAction::unknown || again > advice.action);
  // An application's own fault that repeats is still the application's: no node action for it.
  const bool node_fault = x.fault != ErrorFault::application && x.fault != ErrorFault::informational;
  if (occurrences > 1 && node_fault && stronger && again >= ErrorAction::reset_gpu) {
    advice.action = again;
    advice.why = "it recurred: NVIDIA's investigatory action";
  }
  advice.verdict = error_action_verdict(advice.action, x.fault);
  return advice;
}

std::string_view error_action_name(ErrorAction action) noexcept {
  for (const ActionName& a : kActions) {
    if (a.action == action) return a.name;
  }
  return "unknown";
}

std::optional<ErrorAction> find_error_action(std::string_view name) noexcept {
  for (const ActionName& a : kActions) {
    if (a.name == name) return a.action;
  }
  return std::nullopt;
}

std::string_view error_action_help(ErrorAction action) noexcept {
  for (const ActionName& a : kActions) {
    if (a.action == action) return a.help;
  }
  return "";
}

std::string_view error_fault_name(ErrorFault fault) noexcept {
  switch (fault) {
    case ErrorFault::application: return "application";
    case ErrorFault::driver: return "driver";
    case ErrorFault::hardware: return "hardware";
    case ErrorFault::system: return "system";
    case ErrorFault::informational: return "informational";
    case ErrorFault::unknown: return "unknown";
  }
  return "unknown";
}

ErrorAction xid_instance_action(std::string_view instance) noexcept {
  std::uint32_t code = 0;
  const auto [end, error] = std::from_chars(instance.data(), instance.data() + instance.size(), code);
  if (instance.empty() || error != std::errc() || end != instance.data() + instance.size()) return ErrorAction::unknown;
  return xid_advice(code).action;
}

std::optional<ErrorAction> event_action(const Event& event) {
  if (event.kind == "cper") return detail::action_named_in(event.message);
  // "xid_errors[79]": the code is the metric's instance (events.cpp, metric_label).
  constexpr std::string_view kPrefix = "xid_errors[";
  const std::string_view metric = event.metric;
  if (event.kind != "xid") return std::nullopt;
  if (!metric.starts_with(kPrefix) || !metric.ends_with(']')) return ErrorAction::unknown;  // no code to look up
  return xid_instance_action(metric.substr(kPrefix.size(), metric.size() - kPrefix.size() - 1));
}

Verdict error_action_verdict(ErrorAction action, ErrorFault fault) noexcept {
  switch (action) {
    case ErrorAction::none:
    case ErrorAction::investigate_software:
    case ErrorAction::see_other: return Verdict::pass;
    case ErrorAction::restart_app: return fault == ErrorFault::application ? Verdict::pass : Verdict::warn;
    case ErrorAction::update_software:
    case ErrorAction::unknown: return Verdict::warn;
    case ErrorAction::reset_gpu:
    case ErrorAction::drain_and_reset:
    case ErrorAction::reboot_node:
    case ErrorAction::check_hardware:
    case ErrorAction::contact_support: return Verdict::fail;
  }
  return Verdict::warn;
}

}  // namespace hipstack::smi
