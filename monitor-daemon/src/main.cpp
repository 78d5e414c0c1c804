// hipstack-smid: the monitoring daemon. This file is its life cycle: arguments, configuration,
// signals (SIGTERM/SIGINT stop, SIGHUP reloads), systemd notification and watchdog, and the event
// loop that answers HTTP. Sampling (sampler.cpp) and exposition (prometheus.cpp) live elsewhere.
#include <fmt/format.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <exception>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "cli_docs.hpp"
#include "help_format.hpp"
#include "config.hpp"
#include "crash_report.hpp"
#include "dbus_service.hpp"
#include "grpc_server.hpp"
#include "http_server.hpp"
#include "job_accounting.hpp"
#include "prometheus.hpp"
#include "sampler.hpp"
#include "thread_name.hpp"

namespace {

using namespace hipstack;
using namespace hipstack::smid;

constexpr const char* kVersion = HIPSTACK_VERSION;  // the project version, from CMake

std::string hostname() {
  char name[256] = {};
  // The kernel takes any bytes for a host name (sethostname): printable, as every label.
  return ::gethostname(name, sizeof name - 1) == 0 ? smi::printable_text(name) : std::string("unknown");
}

// What requests are answered from; replaced whole on a reload while requests may be running.
struct Served {
  std::shared_ptr<Sampler> sampler;
  std::string host;
  SeriesProfile profile = SeriesProfile::standard;
};

struct Runtime {
  Config config;
  std::shared_ptr<ErrorKeeper> errors;  // made once, before the first sampler: error_* apply at start
  std::unique_ptr<JobAccounting> jobs;  // started once: job_db applies at start; outlives its users below
  std::unique_ptr<HttpServer> server;
  std::unique_ptr<GrpcServer> grpc;  // bound once: its listeners and TLS settings apply at start
  std::unique_ptr<DbusService> dbus; // connected once: the bus choice applies at start
  bool started = false;              // the first start() has run
  std::mutex mutex;                       // guards `served`
  MetricsPage page;                       // /metrics, rendered once per sample
  std::shared_ptr<const Served> served;

  std::shared_ptr<const Served> current() {
    std::lock_guard lock(mutex);
    return served;
  }
};

HttpResponse answer(Runtime& rt, const std::string& path) {
  const auto served = rt.current();
  if (path == "/metrics") {
    auto parts = rt.page.render_parts(served->sampler->views(),
                                      {served->host, kVersion, served->profile, served->sampler->attribution(),
                                       rt.jobs ? rt.jobs->gpu_jobs() : nullptr, read_process_facts(),
                                       served->sampler->sample_durations(),
                                       read_memory_facts(served->sampler->history_bytes(), served->sampler->config().history_memory)});
    // The shared parts first (the sample's families, then the attribution's), this request's last.
    return {200, "text/plain; version=0.0.4; charset=utf-8", std::move(parts.status), {std::move(parts.samples), std::move(parts.attribution)}};
  }
  if (path == "/healthz") return plain_text(200, "ok\n");
  if (path == "/readyz") {
    return served->sampler->ready() ? plain_text(200, "ready\n")
                                    : plain_text(503, "first samples not taken yet\n");
  }
  return plain_text(404, "not found: try /metrics, /healthz or /readyz\n");
}

// Runs one change asked for over gRPC (already authorised) on a System opened for it, with every
// write the library makes logged together with who asked; then has the main loop reload (SIGHUP),
// so that the samplers see the new devices and partitions.
smi::ControlResult run_change(Runtime& rt, const std::string& who, const MonitorService::Change& change) {
  const Config config = rt.current()->sampler->config();
  smi::OpenOptions open;
  open.sysfs_root = config.sysfs_root;
  open.procfs_root = config.procfs_root;
  open.audit = [who](const smi::AuditRecord& a) {
    std::fprintf(stderr, "hipstack-smid: audit: for %s: GPU %u (%s) %s: %s <- \"%s\": %s\n", who.c_str(), a.device, a.bdf.c_str(),
                 a.action.c_str(), a.path.empty() ? "(nothing written)" : a.path.c_str(), a.value.c_str(), a.result.c_str());
  };
  smi::System system = smi::System::open(open);
  smi::ControlResult result = change(system);
  if (result.outcome == smi::ControlOutcome::applied || result.outcome == smi::ControlOutcome::pending) ::kill(::getpid(), SIGHUP);
  return result;
}

// What a start or reload builds: everything new, made before anything is swapped in, so a failed
// reload changes nothing. Building may block (System::open reads sysfs), so a reload builds on a
// thread of its own while the main loop goes on answering HTTP and signals.
struct Prepared {
  Config config;
  std::shared_ptr<Served> served;
  std::unique_ptr<HttpServer> server;  // only when the listen address changed
};

Prepared prepare(Runtime& rt, Config config, const std::string& listening_on, const Sampler* previous) {
  if (config.host.empty()) config.host = hostname();
  smi::OpenOptions open;
  open.sysfs_root = config.sysfs_root;
  open.procfs_root = config.procfs_root;
  auto system = std::make_shared<const smi::System>(smi::System::open(open));
  for (const auto& b : system->backends()) {
    std::fprintf(stderr, "hipstack-smid: backend %s: %s (%s)\n", b.name.c_str(), b.present ? "present" : "absent", b.reason.c_str());
  }
  Prepared p;
  if (config.listen != listening_on) {
    p.server = std::make_unique<HttpServer>(config.listen, [&rt](const std::string& path) { return answer(rt, path); });
  }
  p.served = std::make_shared<Served>();
  p.served->sampler = std::make_shared<Sampler>(system, config, previous, rt.errors);
  p.served->host = config.host;
  p.served->profile = config.metrics_profile;
  p.config = std::move(config);
  return p;
}

// Swaps in what prepare() built (main thread only). The first start also binds gRPC and D-Bus,
// whose settings apply at start only.
void install(Runtime& rt, Prepared p) {
  {
    std::lock_guard lock(rt.mutex);
    rt.served = std::move(p.served);
  }
  const Config before = rt.config;
  rt.config = std::move(p.config);
  if (p.server) {
    rt.server = std::move(p.server);
    std::fprintf(stderr, "hipstack-smid: listening on %s (port %d)\n", rt.config.listen.c_str(), rt.server->port());
  }
  if (!rt.started) {
    rt.started = true;
    // The mapping folder's jobs are hpc_job labels with or without a store (dcgm-exporter needs none).
    if (rt.config.job_db != "off" || !rt.config.job_mapping_dir.empty()) {
      JobAccountingOptions jobs;
      jobs.db_path = rt.config.job_db == "off" ? "" : rt.config.job_db;
      jobs.mapping_dir = rt.config.job_mapping_dir;
      // Every sample is counted well before the history ring (history_length samples) drops it.
      jobs.poll = std::clamp(rt.config.fast_interval / 2, std::chrono::milliseconds(50), std::chrono::milliseconds(1000));
      // A sample later than this after the previous one means the daemon was not sampling in between.
      jobs.max_gap_s = std::chrono::duration<double>(5 * rt.config.fast_interval + rt.config.read_deadline).count();
      jobs.retention = rt.config.job_retention;
      jobs.save_every = rt.config.job_save_interval;
      jobs.max_running = rt.config.job_max_running;
      rt.jobs = std::make_unique<JobAccounting>(jobs, [&rt]() -> std::shared_ptr<const Sampler> { return rt.current()->sampler; });
      if (rt.jobs->unavailable().empty()) std::fprintf(stderr, "hipstack-smid: job accounting in %s\n", rt.config.job_db.c_str());
      if (!jobs.mapping_dir.empty()) std::fprintf(stderr, "hipstack-smid: job mapping folder %s\n", jobs.mapping_dir.c_str());
    }
    if (rt.config.grpc_listen != "off") {
      rt.grpc = std::make_unique<GrpcServer>(
          rt.config, [&rt]() -> std::shared_ptr<const Sampler> { return rt.current()->sampler; },
          [&rt](const std::string& who, const MonitorService::Change& change) { return run_change(rt, who, change); },
          rt.jobs.get());
      std::fprintf(stderr, "hipstack-smid: gRPC on %s\n", rt.grpc->description().c_str());
    }
    if (rt.config.dbus != "off") {
      // D-Bus serves desktop and node agents: without a bus the daemon still serves HTTP and gRPC.
      try {
        rt.dbus = std::make_unique<DbusService>(rt.config.dbus, [&rt]() -> std::shared_ptr<const Sampler> { return rt.current()->sampler; });
        std::fprintf(stderr, "hipstack-smid: D-Bus %s on the %s bus\n", DbusService::kName, rt.config.dbus.c_str());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "hipstack-smid: no D-Bus interface: %s\n", e.what());
      }
    }
  } else if (before.grpc_listen != rt.config.grpc_listen || before.tls_cert != rt.config.tls_cert ||
             before.tls_key != rt.config.tls_key || before.tls_client_ca != rt.config.tls_client_ca ||
             before.admin_group != rt.config.admin_group || before.tls_admin_subjects != rt.config.tls_admin_subjects ||
             before.max_streams != rt.config.max_streams || before.dbus != rt.config.dbus ||
             before.grpc_flood_burst_bytes != rt.config.grpc_flood_burst_bytes ||
             before.grpc_flood_bytes_per_second != rt.config.grpc_flood_bytes_per_second ||
             before.grpc_flood_refuse != rt.config.grpc_flood_refuse || before.job_db != rt.config.job_db ||
             before.job_mapping_dir != rt.config.job_mapping_dir || before.job_retention != rt.config.job_retention ||
             before.job_save_interval != rt.config.job_save_interval || before.job_max_running != rt.config.job_max_running ||
             before.error_db != rt.config.error_db || before.error_retention != rt.config.error_retention ||
             before.error_max_rows != rt.config.error_max_rows || before.error_max_age != rt.config.error_max_age) {
    std::fprintf(stderr, "hipstack-smid: gRPC, TLS, admin, D-Bus, job and error settings changed: they apply at the next restart\n");
  }
}

// A reload in flight: its thread leaves the outcome here and writes to `done` (an eventfd the
// main loop polls). One at a time; a SIGHUP meanwhile asks for one more after it.
struct Reload {
  int done = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  bool running = false;
  bool again = false;
  std::mutex mutex;  // guards result and error
  std::optional<Prepared> result;
  std::string error;
};

void begin_reload(Runtime& rt, Reload& reload, std::function<Config()> load) {
  if (reload.running) {
    reload.again = true;
    std::fprintf(stderr, "hipstack-smid: a reload is still running (a sysfs read may be stuck): reloading again after it\n");
    return;
  }
  reload.running = true;
  sd_notify(0, "RELOADING=1\nSTATUS=reloading configuration");
  std::thread([&rt, &reload, load = std::move(load), listening_on = rt.config.listen, previous = rt.current()] {
    name_thread("smid-reload");
    std::optional<Prepared> result;
    std::string error;
    try {
      result = prepare(rt, load(), listening_on, previous->sampler.get());
    } catch (const std::exception& e) {
      error = e.what();
    }
    {
      std::lock_guard lock(reload.mutex);
      reload.result = std::move(result);
      reload.error = std::move(error);
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(reload.done, &one, sizeof one);
  }).detach();  // may stay in a blocking read: stopping does not wait for it (_Exit)
}

// Main loop, once the reload thread has written `done`.
void finish_reload(Runtime& rt, Reload& reload, const std::function<Config()>& load) {
  std::uint64_t count = 0;
  [[maybe_unused]] const ssize_t n = ::read(reload.done, &count, sizeof count);
  std::optional<Prepared> result;
  std::string error;
  {
    std::lock_guard lock(reload.mutex);
    result = std::move(reload.result);
    reload.result.reset();
    error = std::move(reload.error);
  }
  reload.running = false;
  if (result) {
    install(rt, std::move(*result));
    std::fprintf(stderr, "hipstack-smid: configuration reloaded\n");
  } else {
    std::fprintf(stderr, "hipstack-smid: reload failed, keeping the running configuration: %s\n", error.c_str());
  }
  sd_notify(0, "READY=1\nSTATUS=serving");
  if (reload.again) {
    reload.again = false;
    begin_reload(rt, reload, load);
  }
}

// Descriptors: the soft limit (often 1024) up to the hard one, so that a flood of connections to a
// listener gRPC accepts itself (TCP) runs into the connection limits and handshake timeout long
// before the sampler runs out of descriptors to read sysfs with (the unit sets LimitNOFILE).
void raise_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// What the man page says beyond the options.
cli_docs::ProgramDocs program_docs() {
  cli_docs::ProgramDocs docs;
  docs.name = "hipstack-smid";
  docs.section = 8;
  docs.description =
      "hipstack-smid samples every GPU of the node through libhipstack-smi and serves the samples as a Prometheus "
      "/metrics page (with /healthz and /readyz), a gRPC API (hipstack.monitor.v1) and a D-Bus interface "
      "(org.hipstack.Monitor1). It runs in the foreground under systemd (Type=notify, watchdog); SIGHUP reloads "
      "the configuration, SIGTERM stops it.";
  docs.exit_status = {{"0", "stopped by SIGTERM or SIGINT, or --once done"},
                      {"1", "could not start (address in use, ...)"},
                      {"2", "bad arguments or a configuration refused (naming file:line)"}};
  docs.see_also = {"hipstack-smi(1)", "systemd.service(5)"};
  return docs;
}

struct DaemonArgs {
  std::string config_path;
  std::optional<std::string> listen, grpc_listen, sysfs_root;
  bool once = false;
  bool foreground = true;
};

// The command line into `args`; an exit code when it was --help or bad (2).
std::optional<int> parse_args(int argc, char** argv, DaemonArgs& args) {
  CLI::App app{"hipstack-smid: GPU monitoring daemon (Prometheus /metrics, gRPC hipstack.monitor.v1, D-Bus)"};
  app.add_option("-c,--config", args.config_path, "Configuration file (key = value; docs/daemon.md)")->check(CLI::ExistingFile);
  app.add_option("--http-listen,--listen", args.listen,
                 "ADDR:PORT for /metrics, /healthz, /readyz (overrides the file; port 0: any free port)");
  app.add_option("--grpc-listen", args.grpc_listen, "unix:PATH, ADDR:PORT or off, for the gRPC API (overrides the file)")
      ->check([](const std::string& value) {
        try {
          check_grpc_listen(value, "--grpc-listen");
        } catch (const std::exception& e) {
          return std::string(e.what());
        }
        return std::string();
      });
  app.add_option("--sysfs-root", args.sysfs_root, "Read DIR in place of /sys (a capture)")->type_name("DIR");
  app.add_flag("--foreground", args.foreground, "Run in the foreground (the only mode: systemd supervises the daemon)");
  app.add_flag("--once", args.once, "Sample once, print /metrics to stdout and exit");
  cli_docs::format_help(app, "hipstack-smid");
  if (const auto code = cli_docs::answer(argc, argv, app, program_docs, kVersion)) return *code;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return std::nullopt;
}

// SIGTERM, SIGINT and SIGHUP through a descriptor, so the event loop handles them like sockets.
// Called before any thread starts: they inherit the mask.
int blocked_signals_fd() {
  sigset_t signals;
  sigemptyset(&signals);
  for (const int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  const int signal_fd = ::signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd < 0) throw std::runtime_error("signalfd failed");
  return signal_fd;
}

// How long the start may take to find the GPUs. Discovery reads sysfs, where a read can hang (a
// hung driver; a FIFO planted where a file should be), and the read deadline of samples does not
// apply to it: past this the daemon ends, saying why, rather than hang with no listener.
constexpr std::chrono::seconds kDiscoveryDeadline{8};

// Runs `work` (a start's discovery) on a thread of its own within kDiscoveryDeadline, while SIGTERM
// and SIGINT still end the process: its signals are blocked (read through signal_fd), so a start
// stuck in a read would otherwise ignore them. Ends the process when the deadline passes (exit 1)
// or a stop signal comes (exit 0); rethrows what `work` threw.
void run_within_discovery_deadline(int signal_fd, std::function<void()> work) {
  struct Shared {
    int done = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    std::function<void()> work;
    std::exception_ptr error;
  };
  auto shared = std::make_shared<Shared>();
  if (shared->done < 0) throw std::runtime_error("eventfd failed");
  shared->work = std::move(work);
  std::thread([shared] {
    try {
      shared->work();
    } catch (...) {
      shared->error = std::current_exception();
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(shared->done, &one, sizeof one);
  }).detach();  // may stay in a blocking read: the process then ends without waiting for it
  const auto deadline = std::chrono::steady_clock::now() + kDiscoveryDeadline;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      std::fprintf(stderr, "hipstack-smid: finding the GPUs took longer than %lld s: a read of the GPUs' files is stuck "
                           "(a hung driver, or a FIFO where a file should be); exiting\n",
                   static_cast<long long>(kDiscoveryDeadline.count()));
      std::fflush(stderr);
      std::_Exit(1);
    }
    pollfd fds[2] = {{shared->done, POLLIN, 0}, {signal_fd, POLLIN, 0}};
    if (::poll(fds, 2, static_cast<int>(left)) < 0) continue;  // EINTR
    if ((fds[1].revents & POLLIN) != 0) {
      signalfd_siginfo info{};
      if (::read(signal_fd, &info, sizeof info) == static_cast<ssize_t>(sizeof info) && info.ssi_signo != SIGHUP) {
        std::fprintf(stderr, "hipstack-smid: stopped (signal %u) while finding the GPUs\n", info.ssi_signo);
        std::fflush(stderr);
        std::_Exit(0);
      }
    }
    if ((fds[0].revents & POLLIN) != 0) {
      ::close(shared->done);
      if (shared->error) std::rethrow_exception(shared->error);
      return;
    }
  }
}

// --once: one sample of every GPU, its /metrics page on stdout.
[[noreturn]] void run_once(Config config, int signal_fd) {
  if (config.host.empty()) config.host = hostname();
  config.attribution = Config::Attribution::off;  // one page of samples: no kubelet, no process scan
  smi::OpenOptions open;
  open.sysfs_root = config.sysfs_root;
  open.procfs_root = config.procfs_root;
  std::shared_ptr<const smi::System> system;
  run_within_discovery_deadline(signal_fd, [&system, &open] { system = std::make_shared<const smi::System>(smi::System::open(open)); });
  Sampler sampler(system, config);
  while (!sampler.ready()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const std::string page = render_metrics(sampler.views(), {config.host, kVersion, config.metrics_profile, nullptr, nullptr,
                                                                   read_process_facts(), sampler.sample_durations()});
  std::fwrite(page.data(), 1, page.size(), stdout);
  std::fflush(stdout);
  std::_Exit(0);  // workers are detached and may sit in a blocking read: do not wait for them
}

// The systemd watchdog is fed while samples keep finishing (some sample within one interval plus
// the read deadline): a wedged sampler stops the pings and systemd restarts the daemon.
class Watchdog {
 public:
  explicit Watchdog(Runtime& rt) : last_progress_(rt.current()->sampler->progress()) {
    std::uint64_t usec = 0;
    enabled_ = sd_watchdog_enabled(0, &usec) > 0;
    ping_every_ = std::chrono::microseconds(usec / 2);
    usec_ = usec;
  }
  // How long the loop may sleep: requests, signals and reloads wake it through their descriptors,
  // so the timeout is only for the memory trim and the watchdog (idle wake-ups cost CPU).
  [[nodiscard]] int poll_ms() const {
    constexpr int kIdle = 5000;
    return enabled_ ? static_cast<int>(std::max<std::int64_t>(10, std::min<std::int64_t>(kIdle, usec_ / 4000))) : kIdle;
  }
  void feed(Runtime& rt) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (const auto progress = rt.current()->sampler->progress(); progress != last_progress_) {
      last_progress_ = progress;
      last_progress_at_ = now;
    }
    const auto allowed = rt.config.fast_interval + rt.config.read_deadline;
    if (now - last_ping_ >= ping_every_ && now - last_progress_at_ <= allowed) {
      sd_notify(0, "WATCHDOG=1");
      last_ping_ = now;
    }
  }

 private:
  bool enabled_ = false;
  std::uint64_t usec_ = 0;
  std::chrono::microseconds ping_every_{};
  std::chrono::steady_clock::time_point last_ping_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_progress_at_ = std::chrono::steady_clock::now();
  std::uint64_t last_progress_ = 0;
};

// The event loop: requests, signals (SIGHUP reloads, SIGTERM/SIGINT stop) and finished reloads.
[[noreturn]] void serve(Runtime& rt, int signal_fd, const std::function<Config()>& load) {
  Reload reload;
  if (reload.done < 0) throw std::runtime_error("eventfd failed");
  sd_notifyf(0, "READY=1\nSTATUS=serving %zu GPU(s) on %s", rt.current()->sampler->views().size(), rt.config.listen.c_str());
  Watchdog watchdog(rt);
  auto last_trim = std::chrono::steady_clock::now();
  for (;;) {
    pollfd fds[3] = {{rt.server->fd(), POLLIN, 0}, {signal_fd, POLLIN, 0}, {reload.done, POLLIN, 0}};
    ::poll(fds, 3, watchdog.poll_ms());
    if ((fds[2].revents & POLLIN) != 0) finish_reload(rt, reload, load);
    if ((fds[1].revents & POLLIN) != 0) {
      signalfd_siginfo info{};
      while (::read(signal_fd, &info, sizeof info) == sizeof info) {
        if (info.ssi_signo == SIGHUP) {
          begin_reload(rt, reload, load);
        } else {
          sd_notify(0, "STOPPING=1");
          std::fprintf(stderr, "hipstack-smid: stopping on signal %u\n", info.ssi_signo);
          rt.server.reset();
          rt.grpc.reset();
          rt.dbus.reset();
          rt.jobs.reset();  // counts and writes the samples taken since its last look
          if (rt.errors) rt.errors->stop();  // writes the errors found since its last write
          std::_Exit(0);  // see --once: detached workers must not delay shutdown
        }
      }
    }
    if ((fds[0].revents & POLLIN) != 0) rt.server->serve_ready();
    // Freed memory that sits inside malloc's heaps (between blocks still in use) goes back to the
    // system now and then: after a burst of requests RSS returns to its level instead of staying.
    if (const auto now = std::chrono::steady_clock::now(); now - last_trim >= std::chrono::seconds(5)) {
      ::malloc_trim(0);
      last_trim = now;
    }
    watchdog.feed(rt);
  }
}

int run(int argc, char** argv) {
  DaemonArgs args;
  if (const auto code = parse_args(argc, argv, args)) return *code;
  const std::function<Config()> load = [&args]() {
    Config config = args.config_path.empty() ? Config{} : load_config(args.config_path);
    if (args.listen) config.listen = *args.listen;
    if (args.grpc_listen) config.grpc_listen = *args.grpc_listen;
    if (args.sysfs_root) config.sysfs_root = *args.sysfs_root;
    return config;
  };
  const int signal_fd = blocked_signals_fd();
  // A configuration that cannot be loaded (a bad line, a file it names missing or malformed) is a
  // usage error: exit 2 at start. A reload with one keeps the running configuration.
  Config initial;
  try {
    initial = load();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hipstack-smid: configuration refused: %s\n", e.what());
    return 2;
  }
  raise_descriptor_limit();
  if (args.once) run_once(std::move(initial), signal_fd);
  Runtime rt;
  ErrorKeeperOptions errors;
  errors.db_path = initial.error_db == "off" ? "" : initial.error_db;
  errors.retention = initial.error_retention;
  errors.max_rows = initial.error_max_rows;
  errors.max_age = initial.error_max_age;
  rt.errors = std::make_shared<ErrorKeeper>(errors);
  if (!errors.db_path.empty() && rt.errors->unavailable().empty()) std::fprintf(stderr, "hipstack-smid: errors kept in %s\n", errors.db_path.c_str());
  std::optional<Prepared> first;
  run_within_discovery_deadline(signal_fd, [&rt, &first, &initial] { first = prepare(rt, std::move(initial), "", nullptr); });
  install(rt, std::move(*first));
  serve(rt, signal_fd, load);
}

}  // namespace

int main(int argc, char** argv) {
  hipstack::smid::install_crash_report();
  // Request threads each render or copy a page of a few hundred KB: with glibc's default of one
  // malloc arena per thread (up to 8 per core) the freed pages stay spread over many arenas. Two
  // arenas keep the daemon small (issue target: 30 MB) at no measurable cost in throughput.
  ::mallopt(M_ARENA_MAX, 2);
  // Blocks of 128 KiB and more (pages, GetHistory answers) come from mmap and go back to the system
  // when freed: with glibc's sliding threshold a burst of big answers leaves RSS high for good.
  ::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hipstack-smid: %s\n", e.what());
    return 1;
  }
}
