// hipstack-smi event: follows the GPUs and prints one line (or one JSON object) per change as it
// happens: devices appearing and disappearing, throttling, ECC/RAS error counts rising, bad pages,
// partition mode changes, counters restarting (a reset or a driver reload), XID errors, KFD events
// (VM faults, thermal throttling, GPU resets), and a device becoming unreadable or readable again.
// The looks (smi::EventWatch) and the rules are the library's (hipstack/events.hpp), which
// hipstack-smid's WatchEvents streams too.
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <hipstack/events.hpp>
#include <hipstack/gpu_errors.hpp>

#include "commands.hpp"
#include "text_layout.hpp"
#include "units.hpp"

namespace hipstack::cli {

void print_event_header(const CommonOptions& options, std::string_view watched, bool hosts) {
  if (options.format == Format::csv) print(std::string(hosts ? "host," : "") + "time,event,device,bdf,uuid,metric,before,after,message,action\n");
  if (options.format != Format::table) return;
  const std::string gpus = options.gpus.empty() ? std::string("every GPU")
                                                : smi::printable_text(fmt::format("GPU {}", fmt::join(options.gpus, ",")));
  const std::string line = hanging_lines(
      "", fmt::format("Watching {} {} for throttling, ECC/RAS errors, bad pages, partition modes, counter restarts, XIDs, "
                      "KFD events and readability: one line per change, Ctrl-C stops.", gpus, watched),
      2, output_width());
  std::fputs(line.c_str(), stderr);
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
    const auto action = smi::event_action(e);
    j["action"] = action ? Json(std::string(smi::error_action_name(*action))) : Json(nullptr);
    print(j.dump() + "\n");
  } else if (options.format == Format::csv) {
    const auto action = smi::event_action(e);
    std::vector<std::string> row = {time,     e.kind,  std::to_string(e.device.index), e.device.bdf, e.device.uuid, e.metric,
                                    e.before, e.after, e.message, action ? std::string(smi::error_action_name(*action)) : ""};
    if (!host.empty()) row.insert(row.begin(), std::string(host));
    print(csv_row(row));
  } else {
    // People's line: the local time and the GPU's index (JSON and CSV carry the UTC time, BDF and
    // UUID), the change, then its message wrapped to the screen under the event's kind.
    const std::string change = e.metric.empty() ? "" : fmt::format("  {} {} -> {}", e.metric, e.before, e.after);
    const std::string who = host.empty() ? std::string() : fmt::format("host {}  ", host);
    const std::string head = fmt::format("{}{}  GPU {}  ", who, local_clock(when, false), e.device.index);
    const std::string line = fmt::format("{}{}{}", head, e.kind, change);
    const std::size_t width = output_width();
    print(e.message.empty() ? line + "\n"
          : display_width(line) + 2 + display_width(e.message) <= width
              ? fmt::format("{}  {}\n", line, e.message)
              : line + "\n" + hanging_lines(std::string(display_width(head), ' '), e.message, display_width(head), width));
  }
  std::fflush(stdout);
}

int run_event(const smi::OpenOptions& open, const CommonOptions& options, double interval_s, long looks) {
  print_event_header(options, fmt::format("every {:g} s", interval_s));
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
