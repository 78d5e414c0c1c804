// hipstack-info: a rocminfo-style report (system attributes, then each CPU and GPU agent) and the
// install checks with advice (docs/info.md). The data comes from libhipstack-smi (hipstack/info.hpp);
// this file parses arguments and prints.
//
// Exit codes: 0 no check failed (the install is usable), 1 a check failed, 2 bad arguments, 3 the
// report could not be written.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <hipstack/info.hpp>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cli_docs.hpp"
#include "help_format.hpp"
#include "units.hpp"

namespace {

using namespace hipstack;
using hipstack::cli::human_bytes;
using Json = nlohmann::ordered_json;

constexpr int kExitOk = 0, kExitCheckFailed = 1, kExitBadArguments = 2, kExitNotWritten = 3;

// text on stdout, flushed, and stdout's error state read: a full disk or a closed descriptor must not
// pass for output written.
bool write_stdout(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (std::fflush(stdout) == 0 && std::ferror(stdout) == 0) return true;
  std::fprintf(stderr, "hipstack-info: cannot write to standard output: %s\n", std::strerror(errno));
  return false;
}

std::string kind_name(smi::Agent::Kind kind) { return kind == smi::Agent::Kind::gpu ? "GPU" : "CPU"; }

std::string status_key(smi::InstallCheck::Status status) {
  std::string key(smi::check_status_name(status));
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return key;
}

// "64 GiB (68719476736 B)": exact bytes, with a readable size in front (units.hpp's spelling).
std::string bytes_text(std::uint64_t bytes) {
  if (bytes == 0) return "0";
  if (bytes < 1024) return fmt::format("{} B", bytes);
  return fmt::format("{} ({} B)", human_bytes(static_cast<double>(bytes)), bytes);
}

// One "  Key:   value" line, skipped when the value is unknown (0 or empty).
class Block {
 public:
  explicit Block(std::string& out, int indent = 2) : out_(out), indent_(indent) {}
  void line(std::string_view key, std::string_view value) {
    if (value.empty()) return;
    out_ += fmt::format("{:{}}{:<28}{}\n", "", indent_, fmt::format("{}:", key), value);
  }
  template <typename T>
  void number(std::string_view key, T value, std::string_view unit = "") {
    if (value == 0) return;
    line(key, unit.empty() ? fmt::format("{}", value) : fmt::format("{} {}", value, unit));
  }

 private:
  std::string& out_;
  int indent_;
};

void banner(std::string& out, std::string_view title) {
  out += fmt::format("{0:=<40}\n{1}\n{0:=<40}\n", "", title);
}

void render_agent(std::string& out, int number, const smi::Agent& a) {
  banner(out, fmt::format("Agent {}", number));
  Block b(out);
  b.line("Name", a.name.empty() ? "(unknown)" : a.name);
  b.line("Marketing Name", a.marketing_name);
  b.line("Vendor Name", a.vendor);
  b.line("Device Type", kind_name(a.kind));
  b.line("Source", a.source);
  if (a.node >= 0) b.line("Node", std::to_string(a.node));
  b.number("GPU ID", a.gpu_id);
  b.line("ISA", a.isa);
  if (a.compute_capability_major != 0) b.line("Compute Capability", fmt::format("{}.{}", a.compute_capability_major, a.compute_capability_minor));
  b.line("BDF", a.bdf);
  if (a.kind == smi::Agent::Kind::gpu) b.number("Location ID", a.location_id);
  b.line("UUID", a.uuid);
  if (a.vendor_id != 0 && a.kind == smi::Agent::Kind::gpu) b.line("PCI ID", fmt::format("{:04x}:{:04x}", a.vendor_id, a.device_id));
  if (a.drm_render_minor > 0) b.line("Render Node", fmt::format("/dev/dri/renderD{}", a.drm_render_minor));
  if (a.partition_index >= 0) b.line("Partition", fmt::format("{} of {} on this PCI slot", a.partition_index, a.partition_count));
  b.number("Compute Units", a.compute_units);
  b.number("SIMDs per CU", a.simds_per_cu);
  b.number("Shader Engines", a.shader_engines);
  b.number("SIMD Arrays per Engine", a.simd_arrays_per_engine);
  b.number("CUs per SIMD Array", a.cu_per_simd_array);
  b.number("XCCs", a.xcc_count);
  b.number(a.vendor == "NVIDIA" ? "Warp Size" : "Wavefront Size", a.wavefront_size);
  b.number("Max Waves per SIMD", a.max_waves_per_simd);
  b.number("Max Threads per Block", a.max_threads_per_block);
  b.number("Max Threads per CU", a.max_threads_per_cu);
  b.number("Registers per CU", a.registers_per_cu);
  b.number("CPU Cores", a.cpu_cores);
  b.number("Max Clock", a.max_clock_mhz, "MHz");
  b.number("Memory Clock", a.memory_clock_mhz, "MHz");
  if (a.lds_bytes != 0) b.line(a.vendor == "NVIDIA" ? "Shared Memory per SM" : "LDS Size", bytes_text(a.lds_bytes));
  if (a.local_memory_bytes != 0) b.line("Local Memory", bytes_text(a.local_memory_bytes));
  b.number("Firmware Version", a.fw_version);
  b.number("SDMA Firmware Version", a.sdma_fw_version);
  b.number("CP Queues", a.cp_queues);
  b.number("SDMA Engines", a.sdma_engines);
  b.number("SDMA XGMI Engines", a.sdma_xgmi_engines);
  if (a.hive_id != 0) b.line("XGMI Hive", fmt::format("{:016x}", a.hive_id));
  if (!a.pools.empty()) {
    out += "  Memory Pools:\n";
    for (const auto& p : a.pools) {
      out += fmt::format("    {:<14}{}{}{}\n", p.kind, bytes_text(p.bytes),
                         p.width_bits != 0 ? fmt::format(", {}-bit", p.width_bits) : "",
                         p.max_clock_mhz != 0 ? fmt::format(", {} MHz", p.max_clock_mhz) : "");
    }
  }
  if (!a.caches.empty()) {
    out += "  Caches:\n";
    for (const auto& c : a.caches) {
      out += fmt::format("    L{} {:<12}{}{}{}\n", c.level, c.type, bytes_text(c.bytes),
                         c.line_bytes != 0 ? fmt::format(", {} B lines", c.line_bytes) : "",
                         c.instances > 1 ? fmt::format(", x{}", c.instances) : "");
    }
  }
  if (!a.links.empty()) {
    out += "  IO Links:\n";
    for (const auto& l : a.links) {
      out += fmt::format("    to node {:<4} {:<15} weight {}{}\n", l.to_node, l.type, l.weight,
                         l.max_bandwidth_mbps != 0 ? fmt::format(", max {} MB/s", l.max_bandwidth_mbps) : "");
    }
  }
  for (const std::string& p : a.problems) out += fmt::format("  Problem: {}\n", p);
}

Json agent_json(const smi::Agent& a) {
  Json pools = Json::array(), caches = Json::array(), links = Json::array();
  for (const auto& p : a.pools) pools.push_back({{"kind", p.kind}, {"bytes", p.bytes}, {"width_bits", p.width_bits}, {"max_clock_mhz", p.max_clock_mhz}});
  for (const auto& c : a.caches) {
    caches.push_back({{"level", c.level}, {"bytes", c.bytes}, {"type", c.type}, {"line_bytes", c.line_bytes}, {"instances", c.instances}});
  }
  for (const auto& l : a.links) {
    links.push_back({{"to_node", l.to_node}, {"type", l.type}, {"weight", l.weight},
                     {"min_bandwidth_mbps", l.min_bandwidth_mbps}, {"max_bandwidth_mbps", l.max_bandwidth_mbps}});
  }
  return Json{{"kind", a.kind == smi::Agent::Kind::gpu ? "gpu" : "cpu"},
              {"vendor", a.vendor},
              {"node", a.node},
              {"name", a.name},
              {"marketing_name", a.marketing_name},
              {"isa", a.isa},
              {"bdf", a.bdf},
              {"uuid", a.uuid},
              {"source", a.source},
              {"compute_units", a.compute_units},
              {"simds_per_cu", a.simds_per_cu},
              {"wavefront_size", a.wavefront_size},
              {"max_waves_per_simd", a.max_waves_per_simd},
              {"max_clock_mhz", a.max_clock_mhz},
              {"memory_clock_mhz", a.memory_clock_mhz},
              {"cpu_cores", a.cpu_cores},
              {"gpu_id", a.gpu_id},
              {"domain", a.domain},
              {"location_id", a.location_id},
              {"drm_render_minor", a.drm_render_minor},
              {"vendor_id", a.vendor_id},
              {"device_id", a.device_id},
              {"partition_index", a.partition_index},
              {"partition_count", a.partition_count},
              {"shader_engines", a.shader_engines},
              {"simd_arrays_per_engine", a.simd_arrays_per_engine},
              {"cu_per_simd_array", a.cu_per_simd_array},
              {"xcc_count", a.xcc_count},
              {"lds_bytes", a.lds_bytes},
              {"local_memory_bytes", a.local_memory_bytes},
              {"fw_version", a.fw_version},
              {"sdma_fw_version", a.sdma_fw_version},
              {"cp_queues", a.cp_queues},
              {"sdma_engines", a.sdma_engines},
              {"sdma_xgmi_engines", a.sdma_xgmi_engines},
              {"hive_id", a.hive_id},
              {"unique_id", a.unique_id},
              {"cpu_core_id_base", a.cpu_core_id_base},
              {"compute_capability", a.compute_capability_major == 0 ? std::string()
                                                                      : fmt::format("{}.{}", a.compute_capability_major, a.compute_capability_minor)},
              {"max_threads_per_block", a.max_threads_per_block},
              {"max_threads_per_cu", a.max_threads_per_cu},
              {"registers_per_cu", a.registers_per_cu},
              {"pools", pools},
              {"caches", caches},
              {"links", links},
              {"problems", a.problems}};
}

Json runtime_json(const smi::RuntimeProbe& r) {
  Json devices = Json::array();
  for (const auto& d : r.devices) {
    devices.push_back({{"index", d.index}, {"name", d.name}, {"bdf", d.bdf}, {"isa", d.isa}, {"memory_bytes", d.memory_bytes},
                       {"compute_units", d.compute_units}, {"warp_size", d.warp_size}});
  }
  return Json{{"runtime", r.runtime}, {"found", r.found}, {"skipped", r.skipped}, {"library_path", r.library_path},
              {"version", r.version}, {"driver_version", r.driver_version}, {"error", r.error}, {"devices", devices}};
}

std::string render_text(const std::vector<smi::Agent>& agents, const std::vector<smi::RuntimeProbe>& runtimes,
                        const std::vector<smi::InstallCheck>& checks, const std::string& source, bool with_checks) {
  std::string out;
  banner(out, "System Attributes");
  Block b(out);
  b.line("hipstack-info", std::string(smi::library_version()));
  b.line("Source", source);
  int cpus = 0, gpus = 0;
  for (const auto& a : agents) (a.kind == smi::Agent::Kind::gpu ? gpus : cpus)++;
  b.line("Agents", fmt::format("{} ({} CPU, {} GPU)", agents.size(), cpus, gpus));
  for (const auto& r : runtimes) {
    const std::string name = r.runtime == "hip" ? "HIP Runtime" : "CUDA Driver API";
    if (!r.skipped.empty()) b.line(name, "not probed: " + r.skipped);
    else if (!r.found) b.line(name, "not found");
    else b.line(name, fmt::format("{} ({}){}", r.version.empty() ? "?" : r.version, r.library_path,
                                  r.driver_version.empty() ? "" : ", driver " + r.driver_version));
  }
  out += "\n";
  int number = 1;
  for (const auto& a : agents) {
    render_agent(out, number++, a);
    out += "\n";
  }
  if (!with_checks) return out;
  banner(out, "Install checks");
  for (const auto& c : checks) {
    out += fmt::format("  {:<5} {:<22} {}\n", smi::check_status_name(c.status), c.name, c.detail);
    if (!c.advice.empty()) out += fmt::format("  {:<5} {:<22} advice: {}\n", "", "", c.advice);
  }
  int failed = 0;
  for (const auto& c : checks) failed += c.status == smi::InstallCheck::Status::fail;
  out += failed == 0 ? "\nResult: usable (no check failed)\n" : fmt::format("\nResult: NOT usable ({} check(s) failed)\n", failed);
  return out;
}

// What the man page says beyond the options.
cli_docs::ProgramDocs program_docs() {
  cli_docs::ProgramDocs docs;
  docs.name = "hipstack-info";
  docs.description =
      "hipstack-info lists the node's CPU and GPU agents as rocminfo does (KFD topology for AMD GPUs, NVML and the "
      "CUDA driver for NVIDIA GPUs) and checks that the installation can run GPU programs: driver loaded, device "
      "nodes present and accessible, runtimes loadable. Each failed check comes with advice.";
  docs.exit_status = {{"0", "usable: no check failed (or --no-checks)"},
                      {"1", "a check failed, or the agents could not be read"},
                      {"2", "bad arguments"},
                      {"3", "the output could not be written"}};
  docs.see_also = {"hipstack-smi(1)", "hipstack-validate(1)", "rocminfo(1)"};
  return docs;
}

int run(int argc, char** argv) {
  CLI::App app{"hipstack-info: rocminfo-style report of CPU and GPU agents, and install checks with advice"};
  smi::OpenOptions open;
  bool json = false, no_checks = false, version = false;
  app.add_option("--sysfs-root", open.sysfs_root, "Read DIR in place of /sys (a capture: device and runtime checks are skipped)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--procfs-root", open.procfs_root, "Read DIR in place of /proc")->check(CLI::ExistingDirectory);
  app.add_option("--devfs-root", open.devfs_root, "Judge device nodes under DIR in place of /dev")->check(CLI::ExistingDirectory);
  app.add_flag("--json", json, "Machine-readable JSON (schema hipstack-info/v1)");
  app.add_flag("--no-checks", no_checks, "Only the report: no runtime probe, no install checks (exit 0)");
  app.add_flag("--version", version, "Print the version and exit");
  cli_docs::format_help(app, "hipstack-info");
  if (const auto code = cli_docs::answer(argc, argv, app, program_docs, smi::library_version())) return *code;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitBadArguments;
  }
  if (version) {
    return write_stdout(fmt::format("hipstack-info {}\n", smi::library_version())) ? kExitOk : kExitNotWritten;
  }
  const std::vector<smi::Agent> agents = smi::read_agents(open);
  std::vector<smi::RuntimeProbe> runtimes;
  std::vector<smi::InstallCheck> checks;
  if (!no_checks) {
    runtimes = smi::probe_runtimes(open);
    checks = smi::install_checks(open, agents, runtimes);
  }
  const bool usable = smi::install_usable(checks);
  const std::string source = open.sysfs_root.empty() ? "live system" : "capture " + open.sysfs_root;
  if (json) {
    Json doc{{"schema", "hipstack-info/v1"}, {"version", std::string(smi::library_version())}, {"source", source},
             {"capture", !open.sysfs_root.empty()}};
    Json list = Json::array();
    for (const auto& a : agents) list.push_back(agent_json(a));
    doc["agents"] = std::move(list);
    if (!no_checks) {
      Json probes = Json::array(), results = Json::array();
      for (const auto& r : runtimes) probes.push_back(runtime_json(r));
      for (const auto& c : checks) {
        results.push_back({{"name", c.name}, {"status", status_key(c.status)}, {"detail", c.detail}, {"advice", c.advice}});
      }
      doc["runtimes"] = std::move(probes);
      doc["checks"] = std::move(results);
      doc["usable"] = usable;
    }
    // KFD properties, names and runtime strings come from files and libraries and need not be UTF-8:
    // an invalid byte becomes U+FFFD instead of an exception that loses the report.
    if (!write_stdout(doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n")) return kExitNotWritten;
  } else {
    if (!write_stdout(render_text(agents, runtimes, checks, source, !no_checks))) return kExitNotWritten;
  }
  return usable ? kExitOk : kExitCheckFailed;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const hipstack::smi::Error& e) {
    std::fprintf(stderr, "hipstack-info: %s\n", e.what());
    return e.code() == hipstack::smi::Error::Code::invalid_argument ? kExitBadArguments : kExitCheckFailed;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hipstack-info: %s\n", e.what());
    return kExitCheckFailed;
  }
}
