// `hipstack-smi --nvidia-smi ...`: the nvidia-smi command lines scripts written for NVIDIA nodes
// run, answered for every GPU hipstack sees, AMD included, with nvidia-smi's field names, headers,
// separators, number forms, messages and exit codes (docs/nvidia-smi-compat.md). The fields and
// their sources are one table (the library's, smi-lib/src/foreign/nvidia_smi.cpp).
#include "nvidia_smi_compat.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include "commands.hpp"
#include "nvidia_smi_fields.hpp"
#include "render.hpp"
#include "suggest.hpp"

namespace hipstack::cli {
namespace {

using Mode = NvidiaSmiRequest::Mode;

// nvidia-smi's exit codes (nvidia-smi(1), "RETURN VALUE").
constexpr int kNvidiaSmiBadArguments = 2;
constexpr int kNvidiaSmiNoDevice = 6;
constexpr int kNvidiaSmiCommandLine = 255;  // dmon's "Failed to process command line"
// nvidia-smi 580's words (captures/recorded/nvidia-smi-580-h100/*.txt).
constexpr std::string_view kBadLoop =
    "Provided [-l(ms) | --loop(-ms)=] value is incorrect. Loop frequency must be greater than 0.\n\n";
constexpr std::string_view kBadCount = "Invalid value for number of samples to be displayed\n\n";
constexpr std::string_view kBadDelay = "Collection delay/interval should be between 1 second and 600 seconds\n\n";
constexpr long kMaxDelaySeconds = 600;
constexpr std::chrono::seconds kDefaultLoop{5};  // -l without a number
constexpr unsigned kProcessScanMs = 0;           // the process list as it stands: no busy window

std::vector<std::string> split(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    std::string item(text.substr(start, comma - start));
    std::erase_if(item, [](char c) { return c == ' '; });
    if (!item.empty()) out.push_back(item);
    start = comma + 1;
  }
  return out;
}

NvidiaSmiRefusal bad_field(std::string_view name, std::span<const NvidiaSmiField> table) {
  std::vector<std::string> known;
  for (const NvidiaSmiField& f : table) known.emplace_back(f.name);
  const std::string hint = did_you_mean(closest_words(name, known));
  return {fmt::format("Field \"{}\" is not a valid field to query.\n\n", printable(name)), kNvidiaSmiBadArguments,
          hint.empty() ? std::string() : fmt::format("hipstack-smi --nvidia-smi:{}", hint)};
}

// nvidia-smi's answer to a second mode in one command line (-q after --query-gpu, ...).
NvidiaSmiRefusal mixed_modes(std::string_view arg) {
  return {fmt::format("ERROR: Option {} is not recognized. Please run 'nvidia-smi -h' for help.\n\n", printable(arg)),
          kNvidiaSmiBadArguments, ""};
}

NvidiaSmiRefusal unsupported(std::string_view arg) {
  return {"", kNvidiaSmiBadArguments,
          fmt::format("hipstack-smi --nvidia-smi: \"{}\" is not answered: --query-gpu, --query-compute-apps, -L, "
                      "-q [-d ...], --help-query-gpu, --help-query-compute-apps with --format, -i, -f, -l, -lms; dmon "
                      "(docs/nvidia-smi-compat.md)",
                      printable(arg))};
}

// An option's value: "--key=value" (long keys) or "KEY value", for any of `keys` ("-i", "--id");
// moves `i` past a separate value. Nothing when argv[i] is not one of them.
std::optional<std::string> option_value(int argc, char** argv, int& i, std::initializer_list<std::string_view> keys) {
  const std::string_view arg = argv[i];
  for (const std::string_view key : keys) {
    if (key.starts_with("--") && arg.starts_with(key) && arg.size() > key.size() && arg[key.size()] == '=') {
      return std::string(arg.substr(key.size() + 1));
    }
    if (arg == key && i + 1 < argc) return std::string(argv[++i]);
  }
  return std::nullopt;
}

// A loop interval: whole seconds (-l) or milliseconds (-lms), at least 1.
std::optional<std::chrono::milliseconds> interval(std::string_view text, bool milliseconds) {
  if (text.empty() || text.size() > 9 || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  const long n = std::stol(std::string(text));
  if (n < 1) return std::nullopt;
  return milliseconds ? std::chrono::milliseconds(n) : std::chrono::milliseconds(n * 1000);
}

// The GPUs -i names, in hipstack's order, each once; nullopt when one names none.
std::optional<std::vector<std::uint32_t>> selected(const DeviceSource& source, const std::vector<std::string>& ids) {
  std::vector<std::uint32_t> out;
  if (ids.empty()) {
    const std::size_t count = source.devices().size();
    for (std::uint32_t i = 0; i < count; ++i) out.push_back(i);
    return out;
  }
  for (const std::string& id : ids) {
    // nvidia-smi's own bus-id form has an 8-digit domain ("00000000:18:00.0").
    const std::string selector = id.find(':') != std::string::npos ? smi::normalise_bdf(id) : id;
    try {
      for (const std::uint32_t index : source.resolve_all(selector)) out.push_back(index);
    } catch (const smi::Error&) {
      return std::nullopt;
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string header(const NvidiaSmiRequest& request) {
  std::vector<std::string> names;
  for (const NvidiaSmiField* f : request.fields) {
    names.push_back(f->unit.empty() ? std::string(f->name) : fmt::format("{} [{}]", f->name, f->unit));
  }
  return fmt::format("{}\n", fmt::join(names, ", "));
}

std::string line(const std::vector<std::string>& cells) {
  std::vector<std::string> shown;
  for (const std::string& c : cells) shown.push_back(printable(c));
  return fmt::format("{}\n", fmt::join(shown, ", "));
}

smi::SampleOptions sample_of(const NvidiaSmiRequest& request) {
  smi::SampleOptions what;
  what.identity = what.static_info = what.live = true;
  for (const NvidiaSmiField* f : request.fields) {
    for (const smi::MetricId id : nvidia_smi_metrics(*f)) {
      if (std::find(what.metrics.begin(), what.metrics.end(), id) == what.metrics.end()) what.metrics.push_back(id);
    }
  }
  return what;
}

std::string gpu_rows(const DeviceSource& source, const NvidiaSmiRequest& request, const std::vector<std::uint32_t>& gpus) {
  const auto devices = source.devices();
  const smi::SampleOptions what = sample_of(request);
  const std::string stamp = nvidia_smi_timestamp();
  // One sample of every GPU at once: through hipstack-smid, one round trip for all of them.
  const auto sampled = what.metrics.empty() ? std::vector<std::vector<smi::Reading>>(gpus.size()) : source.sample_all(gpus, what);
  std::string out;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const NvidiaSmiRow row{devices.at(gpus[i]), sampled.at(i), devices.size(), stamp};
    std::vector<std::string> cells;
    for (const NvidiaSmiField* f : request.fields) cells.push_back(nvidia_smi_value(*f, row, request.units));
    out += line(cells);
  }
  return out;
}

std::string app_rows(const LocalSource& source, const NvidiaSmiRequest& request, const std::vector<std::uint32_t>& gpus) {
  const auto devices = source.devices();
  smi::SampleOptions what = sample_of(request);
  std::erase(what.metrics, smi::MetricId::process_vram);  // a process's, not the GPU's
  const std::string stamp = nvidia_smi_timestamp();
  std::string out;
  for (const std::uint32_t index : gpus) {
    const auto processes = source.processes(index, kProcessScanMs);
    if (!processes || processes->empty()) continue;
    const auto readings = what.metrics.empty() ? std::vector<smi::Reading>{} : source.sample(index, what);
    const NvidiaSmiRow gpu{devices.at(index), readings, devices.size(), stamp};
    for (const smi::ProcessInfo& p : *processes) {
      const NvidiaSmiRow process{devices.at(index), p.readings, devices.size(), stamp};
      const std::string program = nvidia_smi_program(p);
      std::vector<std::string> cells;
      for (const NvidiaSmiField* f : request.fields) {
        if (f->name == "pid") cells.push_back(std::to_string(p.pid));
        else if (f->name == "process_name") cells.push_back(program.empty() ? std::string(f->missing) : program);
        else if (f->name == "used_gpu_memory") cells.push_back(nvidia_smi_value(*f, process, request.units));
        else cells.push_back(nvidia_smi_value(*f, gpu, request.units));
      }
      out += line(cells);
    }
  }
  return out;
}

std::string list_rows(const DeviceSource& source, const std::vector<std::uint32_t>& gpus) {
  const auto devices = source.devices();
  std::string out;
  for (const std::uint32_t index : gpus) {
    const smi::DeviceSummary& d = devices.at(index);
    out += fmt::format("GPU {}: {} (UUID: {})\n", d.index, printable(d.name.empty() ? "[N/A]" : d.name),
                       printable(d.uuid.empty() ? "[N/A]" : d.uuid));
  }
  return out;
}

std::string dmon_rows(const DeviceSource& source, const NvidiaSmiRequest& request, const std::vector<std::uint32_t>& gpus) {
  smi::SampleOptions what;
  what.identity = what.static_info = false;
  what.live = true;
  what.pcie_throughput = request.dmon.select.find('t') != std::string::npos;
  what.metrics = dmon_metrics(request.dmon);
  const auto sampled = source.sample_all(gpus, what);
  std::string out;
  for (std::size_t i = 0; i < gpus.size(); ++i) out += dmon_line(request.dmon, gpus[i], sampled.at(i));
  return out;
}

std::string report(const DeviceSource& source, const LocalSource* local, const NvidiaSmiRequest& request,
                   const std::vector<std::uint32_t>& gpus) {
  const auto devices = source.devices();
  smi::SampleOptions what;
  what.identity = what.static_info = what.live = true;
  what.metrics = nvidia_smi_report_metrics(request.report);
  what.metrics.insert(what.metrics.end(), {smi::MetricId::bdf, smi::MetricId::driver_version, smi::MetricId::cuda_driver_version});
  const std::string stamp = nvidia_smi_timestamp();
  const auto sampled = source.sample_all(gpus, what);  // through hipstack-smid, one round trip for all
  const bool pids = nvidia_smi_report_shows(request.report, "PIDS");
  const NvidiaSmiField& bus = nvidia_smi_field(nvidia_smi_gpu_fields(), "pci.bus_id");
  std::string body;
  std::string driver, cuda;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const auto& readings = sampled.at(i);
    const NvidiaSmiRow row{devices.at(gpus[i]), readings, devices.size(), stamp};
    const auto text_of = [&readings](smi::MetricId id) {
      const auto it = std::find_if(readings.begin(), readings.end(), [id](const smi::Reading& r) { return r.id == id && r.ok(); });
      return it == readings.end() ? std::string() : value_text(*it);
    };
    if (driver.empty()) driver = text_of(smi::MetricId::driver_version);
    if (cuda.empty()) cuda = text_of(smi::MetricId::cuda_driver_version);
    const auto processes = pids && local != nullptr ? local->processes(gpus[i], kProcessScanMs) : std::nullopt;
    body += fmt::format("GPU {}\n", printable(nvidia_smi_value(bus, row, false)));
    body += nvidia_smi_report_gpu(request.report, row, processes);
  }
  return nvidia_smi_report_header(driver, cuda, devices.size()) + body;
}

// Where the output goes: stdout, or the -f file, created or emptied, never through a link.
class Output {
 public:
  explicit Output(const std::string& path) {
    if (path.empty()) return;
    // O_NONBLOCK: a FIFO nobody reads fails the open (ENXIO) instead of blocking it forever; the
    // writes then block as usual.
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
    if (fd_ >= 0 && ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
    if (fd_ < 0) error_ = fmt::format("cannot write {}: {}", printable(path), std::strerror(errno));
  }
  ~Output() {
    if (fd_ >= 0) ::close(fd_);
  }
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;
  [[nodiscard]] const std::string& error() const { return error_; }
  bool write(const std::string& text) {
    if (fd_ < 0) {
      print(text);
      return std::fflush(stdout) == 0;
    }
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

 private:
  int fd_ = -1;
  std::string error_;
};

// Waits until `until` or a SIGINT / SIGTERM (blocked by the caller); true when a signal came.
bool stopped_before(std::chrono::steady_clock::time_point until, const sigset_t& stops) {
  for (;;) {
    const auto left = until - std::chrono::steady_clock::now();
    if (left <= std::chrono::nanoseconds::zero()) return false;
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    const timespec wait{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    const int got = sigtimedwait(&stops, nullptr, &wait);
    if (got == SIGINT || got == SIGTERM) return true;
    if (got < 0 && errno == EAGAIN) return false;
  }
}

// `dmon [-i ID,...] [-d SEC] [-c COUNT] [-s pucvmet] [-o DT] [-f FILE]`.
std::optional<NvidiaSmiRefusal> parse_dmon_args(int argc, char** argv, int first, int compat_flag, NvidiaSmiRequest& request) {
  request.mode = Mode::dmon;
  request.loop = std::chrono::seconds(1);
  for (int i = first; i < argc; ++i) {
    if (i == compat_flag) continue;
    const std::string_view arg = argv[i];
    const auto value_of = [&](std::initializer_list<std::string_view> keys) { return option_value(argc, argv, i, keys); };
    if (auto ids = value_of({"-i", "--id"})) {
      for (const std::string& id : split(*ids)) request.ids.push_back(id);
    } else if (auto delay = value_of({"-d", "--delay"})) {
      request.loop = interval(*delay, false);
      // nvidia-smi says so and exits 0 without monitoring (recorded: dmon-bad-delay.txt).
      if (!request.loop || *request.loop > std::chrono::seconds(kMaxDelaySeconds)) return NvidiaSmiRefusal{std::string(kBadDelay), 0, ""};
    } else if (auto count = value_of({"-c", "--count"})) {
      const auto rounds = interval(*count, true);
      if (!rounds) return NvidiaSmiRefusal{std::string(kBadCount), 0, ""};  // exit 0, as nvidia-smi (dmon-bad-count.txt)
      request.count = rounds->count();
    } else if (auto select = value_of({"-s", "--select"})) {
      request.dmon.select = *select;
    } else if (auto options = value_of({"-o", "--options"})) {
      request.dmon.time_columns = *options;
    } else if (auto file = value_of({"-f", "--filename"})) {
      request.file = *file;
    } else if (arg == "--direct") {
      request.direct = true;
    } else if (auto root = value_of({"--sysfs-root"})) {
      request.open.sysfs_root = *root;
    } else if (auto proc = value_of({"--procfs-root"})) {
      request.open.procfs_root = *proc;
    } else {
      return unsupported(fmt::format("dmon {}", arg));
    }
  }
  if (const auto refusal = dmon_refusal(request.dmon)) return NvidiaSmiRefusal{*refusal, kNvidiaSmiCommandLine, ""};
  return std::nullopt;
}

}  // namespace

std::optional<NvidiaSmiRefusal> parse_nvidia_smi_args(int argc, char** argv, int compat_flag, NvidiaSmiRequest& request) {
  bool have_query = false;
  for (int i = 1; i < argc; ++i) {
    if (i == compat_flag) continue;
    const std::string_view arg = argv[i];
    if (arg == "dmon" && !have_query) return parse_dmon_args(argc, argv, i + 1, compat_flag, request);
    const auto value_of = [&](std::initializer_list<std::string_view> keys) { return option_value(argc, argv, i, keys); };
    // One mode a command line: a second one is refused as nvidia-smi refuses it.
    const auto enter = [&](Mode mode) -> std::optional<NvidiaSmiRefusal> {
      if (have_query) return mixed_modes(arg);
      request.mode = mode;
      have_query = true;
      return std::nullopt;
    };
    if (auto v = value_of({"--query-gpu"})) {
      if (auto refusal = enter(Mode::query_gpu)) return refusal;
      for (const std::string& name : split(*v)) {
        const NvidiaSmiField* field = find_nvidia_smi_field(nvidia_smi_gpu_fields(), name);
        if (field == nullptr) return bad_field(name, nvidia_smi_gpu_fields());
        request.fields.push_back(field);
      }
    } else if (auto a = value_of({"--query-compute-apps"})) {
      if (auto refusal = enter(Mode::query_apps)) return refusal;
      for (const std::string& name : split(*a)) {
        const NvidiaSmiField* field = find_nvidia_smi_field(nvidia_smi_app_fields(), name);
        if (field == nullptr) return bad_field(name, nvidia_smi_app_fields());
        request.fields.push_back(field);
      }
    } else if (arg == "-L" || arg == "--list-gpus") {
      if (auto refusal = enter(Mode::list)) return refusal;
    } else if (arg == "-q" || arg == "--query") {
      if (auto refusal = enter(Mode::report)) return refusal;
    } else if (auto display = value_of({"-d", "--display"})) {
      for (const std::string& section : split(*display)) request.report.sections.push_back(section);
      if (const auto refusal = nvidia_smi_report_refusal(request.report)) return NvidiaSmiRefusal{*refusal, kNvidiaSmiBadArguments, ""};
    } else if (arg == "--help-query-gpu") {
      if (auto refusal = enter(Mode::help_gpu)) return refusal;
    } else if (arg == "--help-query-compute-apps") {
      if (auto refusal = enter(Mode::help_apps)) return refusal;
    } else if (auto f = value_of({"--format"})) {
      const auto parts = split(*f);
      for (const std::string& part : parts) {
        if (part == "noheader") request.header = false;
        else if (part == "nounits") request.units = false;
        else if (part != "csv") return NvidiaSmiRefusal{"Format modifier is not recognized.\n", kNvidiaSmiBadArguments, ""};
      }
    } else if (auto ids = value_of({"-i", "--id"})) {
      for (const std::string& id : split(*ids)) request.ids.push_back(id);
    } else if (auto file = value_of({"-f", "--filename"})) {
      request.file = *file;
    } else if (arg == "-l" || arg.starts_with("--loop=") || arg == "--loop") {
      // The interval is optional: the next word is taken when it is a number.
      std::string text = arg.starts_with("--loop=") ? std::string(arg.substr(7)) : std::string();
      if (text.empty() && i + 1 < argc && std::isdigit(static_cast<unsigned char>(argv[i + 1][0])) != 0) text = argv[++i];
      request.loop = text.empty() ? std::optional<std::chrono::milliseconds>(kDefaultLoop) : interval(text, false);
      if (!request.loop) return NvidiaSmiRefusal{std::string(kBadLoop), kNvidiaSmiBadArguments, ""};
    } else if (auto ms = value_of({"-lms", "--loop-ms"})) {
      request.loop = interval(*ms, true);
      if (!request.loop) return NvidiaSmiRefusal{std::string(kBadLoop), kNvidiaSmiBadArguments, ""};
    } else if (arg == "--direct") {
      request.direct = true;
    } else if (auto root = value_of({"--sysfs-root"})) {
      request.open.sysfs_root = *root;
    } else if (auto proc = value_of({"--procfs-root"})) {
      request.open.procfs_root = *proc;
    } else {
      return unsupported(arg);
    }
  }
  if (!have_query) return unsupported("(no query)");
  return std::nullopt;
}

int refuse_nvidia_smi(const NvidiaSmiRefusal& refusal) {
  print(refusal.message);
  std::fflush(stdout);
  if (!refusal.hint.empty()) std::fprintf(stderr, "%s\n", refusal.hint.c_str());
  return refusal.exit_code;
}

bool nvidia_smi_needs_gpus(const NvidiaSmiRequest& request) {
  return request.mode != Mode::help_gpu && request.mode != Mode::help_apps;
}

int run_nvidia_smi_help(const NvidiaSmiRequest& request) {
  const bool gpu = request.mode == Mode::help_gpu;
  std::string out = fmt::format(
      "The fields hipstack-smi --nvidia-smi answers for \"{}\" (the names of nvidia-smi 580),\n"
      "and where each value comes from. \"[N/A]\": hipstack has no figure for it, for the reason given.\n",
      gpu ? "--query-gpu" : "--query-compute-apps");
  for (const NvidiaSmiField& f : gpu ? nvidia_smi_gpu_fields() : nvidia_smi_app_fields()) {
    std::string names = fmt::format("\"{}\"", f.name);
    for (const std::string& alias : nvidia_smi_aliases(f)) names += fmt::format(" or \"{}\"", alias);
    std::vector<std::string> sources;
    for (const smi::MetricId id : f.from) sources.emplace_back(smi::find_metric(id)->name);
    std::string how;
    if (f.form == NvidiaSmiForm::none) {
      how = fmt::format("prints {}: {}", f.missing, f.note);
    } else if (!sources.empty()) {
      how = fmt::format("from {}{}{}", fmt::join(sources, f.form == NvidiaSmiForm::pci_ids ? " and " : ", else "),
                        f.note.empty() ? "" : "; ", f.note);
    } else {
      how = std::string(f.note);
    }
    out += fmt::format("\n{}\n    {}\n", names, how);
  }
  print(out);
  return kExitOk;
}

bool nvidia_smi_reads_processes(const NvidiaSmiRequest& request) {
  return request.mode == Mode::query_apps || (request.mode == Mode::report && nvidia_smi_report_shows(request.report, "PIDS")) ||
         (request.mode == Mode::dmon && request.dmon.select.find('t') != std::string::npos);  // a measurement of its own
}

int run_nvidia_smi_request(const DeviceSource& source, const LocalSource* local, const NvidiaSmiRequest& request) {
  const auto gpus = selected(source, request.ids);
  if (!gpus || gpus->empty()) return refuse_nvidia_smi({"No devices were found\n", kNvidiaSmiNoDevice, ""});
  Output output(request.file);
  if (!output.error().empty()) {
    std::fprintf(stderr, "hipstack-smi --nvidia-smi: %s\n", output.error().c_str());
    return kExitReadFailure;
  }
  sigset_t stops;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  const bool csv = request.mode == Mode::query_gpu || request.mode == Mode::query_apps;
  if (csv && request.header && !output.write(header(request))) return kExitReadFailure;
  if (request.mode == Mode::dmon && !output.write(dmon_header(request.dmon))) return kExitReadFailure;
  const auto start = std::chrono::steady_clock::now();
  for (long round = 1;; ++round) {
    const std::string rows = request.mode == Mode::query_gpu    ? gpu_rows(source, request, *gpus)
                             : request.mode == Mode::query_apps ? app_rows(*local, request, *gpus)
                             : request.mode == Mode::dmon       ? dmon_rows(source, request, *gpus)
                             : request.mode == Mode::report     ? report(source, local, request, *gpus)
                                                                : list_rows(source, *gpus);
    if (!output.write(rows)) {
      std::fprintf(stderr, "hipstack-smi --nvidia-smi: writing the output failed: %s\n", std::strerror(errno));
      return kExitReadFailure;
    }
    if (!request.loop || (request.count && round >= *request.count) || stopped_before(start + round * *request.loop, stops)) break;
  }
  return finish_with_faults(source, *gpus);
}

}  // namespace hipstack::cli
