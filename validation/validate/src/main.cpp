// hipstack-validate: "is it installed right, and does it perform?" in levels like dcgmi diag -r:
// 1 software checks (seconds), 2 adds the quick kernels (about a minute), 3 adds GEMM, a longer
// memory test, stress and peer-to-peer (minutes), 4 long runs. docs/validate.md.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in <fmt/format.h> before fmt 11)
#include <hipstack/smi.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>

#include "cli_docs.hpp"
#include "help_format.hpp"
#include "node.hpp"
#include "plan.hpp"
#include "progress.hpp"
#include "report.hpp"
#include "process.hpp"
#include "runner.hpp"
#include "stop_signals.hpp"
#include "thresholds.hpp"

namespace {

// Writes the --json-file report. Root runs hipstack-validate: O_NOFOLLOW refuses a link planted at
// that path (it would make root write wherever the link points). 0 or errno.
int write_report(const std::string& path, std::string_view text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  int error = 0;
  for (std::size_t done = 0; done < text.size() && error == 0;) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) error = n < 0 ? errno : EIO;
    else done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && error == 0 && errno != EINTR) error = errno;
  return error;
}

using namespace hipstack;
using namespace hipstack::validate;

// $HIPSTACK_VALIDATE_MODULES, the installed libexec/hipstack/validation beside the program, then this
// build tree's kernels (a developer's run).
std::filesystem::path default_module_dir() {
  if (const char* given = std::getenv("HIPSTACK_VALIDATE_MODULES"); given && *given) return given;
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  const auto installed = self.parent_path().parent_path() / "libexec/hipstack/validation";
  if (!error && std::filesystem::is_directory(installed, error)) return installed;
  if (*HIPSTACK_VALIDATE_BUILD_MODULES) return HIPSTACK_VALIDATE_BUILD_MODULES;
  return installed;  // missing: each module then fails naming where it looked
}

// stdout flushed and its error state read: false, with a message, when anything written to it was
// lost (a full disk, a closed descriptor), which must not pass for output written.
bool stdout_written() {
  if (std::fflush(stdout) == 0 && std::ferror(stdout) == 0) return true;
  fmt::print(stderr, "hipstack-validate: cannot write to standard output: {}\n", std::strerror(errno));
  return false;
}

std::string list_modules() {
  std::string out = "level 1 (software): install checks (driver, device nodes, runtime, device lists agree), "
                    "each GPU's PCIe link and health\n";
  for (const Module& m : modules()) {
    out += fmt::format("level {}+ {:<11} {}{}\n", m.level, m.test, m.summary, m.per_device ? "" : " [whole node]");
    for (int level = std::max(2, m.level); level <= 4; ++level)
      out += fmt::format("           -r {}: {} {} (limit {} s)\n", level, m.program, fmt::join(m.args(level), " "),
                         m.timeout_s(level));
  }
  return out;
}

// What the man page says beyond the options.
hipstack::cli_docs::ProgramDocs program_docs() {
  hipstack::cli_docs::ProgramDocs docs;
  docs.name = "hipstack-validate";
  docs.description =
      "hipstack-validate checks a GPU node by levels: 1 software checks, 2 quick kernels, 3 GEMM, a longer memory "
      "test, stress and peer-to-peer, 4 long runs. Kernel programs run as separate processes while telemetry is "
      "sampled; results are judged against thresholds.json. A test that could not run is SKIP, never PASS.";
  docs.exit_status = {{"0", "every test passed (warnings allowed)"},
                      {"1", "a test failed"},
                      {"2", "bad arguments, a bad thresholds file, or output that could not be written"},
                      {"3", "no such GPU"},
                      {"8", "nothing failed, but a selected GPU was judged by no test (result UNKNOWN)"}};
  docs.see_also = {"hipstack-smi(1)", "hipstack-info(1)"};
  docs.comma_lists = {"--device", "--tests"};
  for (const Module& module : modules()) docs.value_words["--tests"].emplace_back(module.test);
  return docs;
}

struct Args {
  int level = 1;
  std::vector<std::string> device_args, test_args;
  bool json = false, quiet = false, list = false, version = false;
  std::string config, module_dir, sysfs_root, json_file;
  int timeout = 0;
};

// The command line into `args`; an exit code when it was --help or bad (2).
std::optional<int> parse_args(int argc, char** argv, Args& args) {
  CLI::App app{"hipstack-validate: install checks and hardware tests for AMD and NVIDIA GPUs, by level"};
  app.add_option("-r,--run", args.level, "level: 1 software checks (seconds), 2 quick kernels (about a minute), "
                                         "3 GEMM, longer memory test, stress, peer-to-peer (minutes), 4 long")
      ->check(CLI::Range(1, 4));
  app.add_option("-d,--device", args.device_args, "GPUs to test: index, BDF or UUID (comma lists; default all)")
      ->delimiter(',');
  app.add_option("-t,--tests", args.test_args, "only these modules (comma list), at the chosen level's settings")
      ->delimiter(',');
  app.add_flag("--json", args.json, "print the result as JSON");
  app.add_option("--json-file", args.json_file, "also write the JSON result to this file (the table still prints)")
      ->type_name("FILE");
  app.add_option("-c,--config", args.config, "thresholds file (default /etc/hipstack/validate-thresholds.json, then the "
                                             "installed thresholds.json)")
      ->type_name("FILE");
  app.add_option("--module-dir", args.module_dir, "folder of the kernel programs (default: $HIPSTACK_VALIDATE_MODULES, "
                                                  "then the installed libexec/hipstack/validation)")
      ->type_name("DIR");
  app.add_option("--timeout", args.timeout, "limit every module to this many seconds (default: each module's own "
                                            "limit for the level, shown by --list)")
      ->check(CLI::PositiveNumber);
  app.add_option("--sysfs-root", args.sysfs_root, "read GPUs from this sysfs tree (a capture) instead of /sys")
      ->type_name("DIR");
  app.add_flag("--list", args.list, "list the modules and what each level runs, then exit");
  app.add_flag("-q,--quiet", args.quiet, "no progress lines on stderr");
  app.add_flag("--version", args.version, "print the version and exit");
  hipstack::cli_docs::format_help(app, "hipstack-validate");
  if (const auto code = hipstack::cli_docs::answer(argc, argv, app, program_docs, smi::library_version())) return *code;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return std::nullopt;
}

// -t's modules, else every module up to the level; nothing (after naming it) for an unknown name.
std::optional<std::vector<const Module*>> select_modules(const Args& args) {
  std::vector<const Module*> selected;
  for (const std::string& name : args.test_args) {
    const Module* m = find_module(name);
    if (!m) {
      std::string names;
      for (const Module& known : modules()) names += (names.empty() ? "" : ", ") + std::string(known.test);
      fmt::print(stderr, "hipstack-validate: no module '{}' (modules: {})\n", name, names);
      return std::nullopt;
    }
    selected.push_back(m);
  }
  if (args.test_args.empty())
    for (const Module& m : modules())
      if (m.level <= args.level) selected.push_back(&m);
  return selected;
}

// -d's GPUs (each once), else every GPU.
std::vector<std::uint32_t> selected_devices(const smi::System& system, const Args& args) {
  std::vector<std::uint32_t> devices;
  for (const std::string& selector : args.device_args) {
    const std::uint32_t index = system.resolve(selector);
    if (std::find(devices.begin(), devices.end(), index) == devices.end()) devices.push_back(index);
  }
  if (args.device_args.empty())
    for (const smi::DeviceSummary& d : system.devices()) devices.push_back(d.index);
  return devices;
}

// Every selected module on every GPU (the per-GPU ones), then the whole-node ones, until a stop signal.
void run_modules(const std::vector<const Module*>& selected, const RunContext& context, Progress& progress,
                 StopSignals& stop, Report& report) {
  const auto run = [&](const Module& m, const Unit* unit) {
    if (stop.received() == 0) report.tests.push_back(run_module(m, context, unit, progress));
  };
  for (const Unit& unit : report.units)
    for (const Module* m : selected)
      if (m->per_device) run(*m, &unit);
  for (const Module* m : selected)
    if (!m->per_device && !report.units.empty()) run(*m, nullptr);
}

// The report on stdout (and --json-file); false when any of it could not be written.
bool write_outputs(const Report& report, const Args& args) {
  // Text from outside (a module's stderr, names read from sysfs) need not be UTF-8: an invalid byte
  // becomes U+FFFD rather than an exception that would lose the whole report.
  const std::string document =
      render_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  // A full disk or a closed descriptor must not pass for a report written (exit 2 then); the other
  // output is still attempted, so that one of them may keep the results.
  const std::string text = args.json ? document : render_table(report);
  std::fwrite(text.data(), 1, text.size(), stdout);
  bool written = stdout_written();
  if (!args.json_file.empty()) {
    if (const int error = write_report(args.json_file, document); error != 0) {
      fmt::print(stderr, "hipstack-validate: cannot write {}: {}\n", args.json_file, std::strerror(error));
      written = false;
    }
  }
  return written;
}

int exit_code(const Report& report) {
  switch (report.overall()) {
    case Outcome::fail: return 1;
    case Outcome::unknown: return 8;  // as `hipstack-smi health`: nothing was evaluated
    case Outcome::pass:
    case Outcome::warn: break;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // An ignored SIGCHLD is inherited across exec (nohup-style wrappers, some job runners) and makes the
  // kernel reap our modules itself, so their exit status would be lost: take the default back.
  std::signal(SIGCHLD, SIG_DFL);
  Args args;
  if (const auto code = parse_args(argc, argv, args)) return *code;
  if (args.version || args.list) {
    if (args.version) fmt::print("hipstack-validate {}\n", smi::library_version());
    else fmt::print("{}", list_modules());
    return stdout_written() ? 0 : 2;
  }
  const auto selected_modules = select_modules(args);
  if (!selected_modules) return 2;
  Thresholds thresholds;
  try {
    thresholds = Thresholds::load(args.config.empty() ? default_thresholds_path() : args.config);
  } catch (const std::exception& e) {
    fmt::print(stderr, "hipstack-validate: thresholds: {}\n", e.what());
    return 2;
  }
  smi::OpenOptions open;
  open.sysfs_root = args.sysfs_root;
  std::optional<smi::System> system;
  std::vector<std::uint32_t> devices;
  try {
    system.emplace(smi::System::open(open));
    devices = selected_devices(*system, args);
  } catch (const smi::Error& e) {
    fmt::print(stderr, "hipstack-validate: {}\n", e.what());
    return e.code() == smi::Error::Code::no_such_device ? 3 : 2;
  }

  const auto started = std::chrono::steady_clock::now();
  Report report;
  report.level = args.level;
  report.thresholds = thresholds.source;
  report.module_dir = args.module_dir.empty() ? default_module_dir().string() : args.module_dir;
  Node node = inspect_node(*system, open, thresholds, devices);
  report.units = node.units;
  report.tests = std::move(node.checks);

  int runs = 0;
  for (const Module* m : *selected_modules) runs += m->per_device ? static_cast<int>(report.units.size()) : (report.units.empty() ? 0 : 1);
  Progress progress(!args.quiet, runs);
  // From here a stop signal ends the running module and skips the rest (the level-1 checks above
  // start no process, so the default action, dying at once, is right for them).
  std::optional<StopSignals> stop;
  try {
    stop.emplace();
  } catch (const std::system_error& e) {
    fmt::print(stderr, "hipstack-validate: cannot watch for stop signals: {}\n", e.what());
    return 2;
  }
  const RunContext context{*system, report.module_dir, report.units, args.level, args.timeout, &*stop};
  run_modules(*selected_modules, context, progress, *stop, report);
  if (const int signal = stop->received()) report.stopped_by = signal_name(signal);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const bool written = write_outputs(report, args);
  if (const int signal = stop->received()) {  // the report is out: now end as the signal asked
    stop.reset();
    StopSignals::die_of(signal);
  }
  return written ? exit_code(report) : 2;
}
