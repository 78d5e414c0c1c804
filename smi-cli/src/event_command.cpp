// hipstack-smi event: follows the GPUs and prints one line (or one JSON object) per change as it
// happens: devices appearing and disappearing, throttling, ECC/RAS error counts rising, bad pages,
// partition mode changes, counters restarting (a reset or a driver reload), XID errors, KFD events
// (VM faults, thermal throttling, GPU resets), and a device becoming unreadable or readable again.
// The looks (smi::EventWatch) and the rules are the library's (hipstack/events.hpp), which
// hipstack-smid's WatchEvents streams too.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <thread>
#include <vector>

#include <hipstack/events.hpp>

#include "commands.hpp"

namespace hipstack::cli {

void print_event_header(const CommonOptions& options, bool hosts) {
  if (options.format == Format::csv) print(std::string(hosts ? "host," : "") + "time,event,device,bdf,uuid,metric,before,after,message\n");
}

void print_event(const smi::Event& e, const CommonOptions& options, std::chrono::system_clock::time_point when,
                 std::string_view host) {
  const std::string time = fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", std::chrono::time_point_cast<std::chrono::milliseconds>(when));
  if (options.format == Format::json) {
    Json j;
    if (!host.empty()) j["host"] = std::string(host);
    j.update(Json{{"time", time},     {"event", e.kind},     {"gpu", e.device.index}, {"bdf", e.device.bdf},
                  {"uuid", e.device.uuid}, {"metric", e.metric}, {"before", e.before}, {"after", e.after},
                  {"message", e.message}});
    print(j.dump() + "\n");
  } else if (options.format == Format::csv) {
    std::vector<std::string> row = {time, e.kind, std::to_string(e.device.index), e.device.bdf, e.device.uuid, e.metric,
                                    e.before, e.after, e.message};
    if (!host.empty()) row.insert(row.begin(), std::string(host));
    print(csv_row(row));
  } else {
    const std::string change = e.metric.empty() ? "" : fmt::format("  {} {} -> {}", e.metric, e.before, e.after);
    const std::string who = host.empty() ? std::string() : fmt::format("host {}  ", host);
    print(fmt::format("{}{}  GPU {} {}  {}{}  {}\n", who, time, e.device.index, e.device.bdf, e.kind, change, e.message));
  }
  std::fflush(stdout);
}

int run_event(const smi::OpenOptions& open, const CommonOptions& options, double interval_s, long looks) {
  print_event_header(options);
  smi::EventWatch watch(open, options.gpus);  // subscribed to XIDs and KFD events from now on
  for (const smi::Event& e : watch.poll()) print_event(e, options, std::chrono::system_clock::now());
  const auto interval = std::chrono::duration<double>(interval_s);
  for (long n = 1; looks == 0 || n < looks; ++n) {
    std::this_thread::sleep_for(interval);
    for (const smi::Event& e : watch.poll()) print_event(e, options, std::chrono::system_clock::now());
  }
  return kExitOk;
}

}  // namespace hipstack::cli
