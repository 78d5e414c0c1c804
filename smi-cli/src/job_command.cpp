// `hipstack-smi job start|stop|show|list` against the node's hipstack-smid (job_command.hpp).
#include "job_command.hpp"

#include <fmt/format.h>
#include <hipstack/smi.hpp>

#include <cctype>
#include <ctime>

#include "commands.hpp"
#include "proto_convert.hpp"
#include "units.hpp"

namespace hipstack::cli {
namespace {

namespace pb = ::hipstack::monitor::v1;
using WallClock = std::chrono::system_clock;

WallClock::time_point from_unix_ms(std::int64_t ms) { return WallClock::time_point(std::chrono::milliseconds(ms)); }

std::string duration_text(double seconds) {
  if (seconds < 120) return fmt::format("{:.1f} s", seconds);
  const auto s = static_cast<long long>(seconds);
  if (s < 7200) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
}

std::string figure_value(const pb::JobFigure& f) {
  if (!f.known()) return "unknown";
  if (f.unit() == "B") return human_bytes(f.value());
  if (f.unit() == "s") return duration_text(f.value());
  if (f.unit().empty()) return fmt::format("{:.0f}", f.value());
  if (f.unit() == "J") return f.value() >= 1e6 ? fmt::format("{:.3f} MJ", f.value() / 1e6) : fmt::format("{:.1f} J", f.value());
  return fmt::format("{:.1f} {}", f.value(), f.unit());
}

std::string figure_name(const pb::JobFigure& f) {
  return f.instance().empty() ? f.name() : fmt::format("{}[{}]", f.name(), f.instance());
}

const pb::JobFigure* find_figure(const pb::JobGpu& gpu, std::string_view name) {
  for (const pb::JobFigure& f : gpu.figures()) {
    if (f.name() == name && f.instance().empty()) return &f;
  }
  return nullptr;
}

// What happened to the job, in a line: "job 4711 (user alice): started ..., stopped ... (wall 1h02m)".
std::string job_heading(const pb::Job& job) {
  std::string line = fmt::format("job {}", job.id());
  if (!job.user().empty()) line += fmt::format(" (user {})", job.user());
  line += fmt::format(": started {}", utc_iso(from_unix_ms(job.started_unix_ms())));
  if (job.running()) return line + ", running";
  return line + fmt::format(", stopped {}", utc_iso(from_unix_ms(job.stopped_unix_ms())));
}

// A daemon's answer as every view prints it: each string made printable where it is received
// (proto::peer_text), so tables, CSV and JSON alike show a hostile daemon's text as text.
pb::Job printable_job(pb::Job job) {
  const auto fix = [](std::string* text) { *text = proto::peer_text(*text); };
  for (std::string* text : {job.mutable_id(), job.mutable_user(), job.mutable_started_by(), job.mutable_stopped_by()}) fix(text);
  for (std::string& problem : *job.mutable_problems()) fix(&problem);
  for (pb::JobGpu& gpu : *job.mutable_gpus()) {
    for (std::string* text : {gpu.mutable_uuid(), gpu.mutable_bdf(), gpu.mutable_name(), gpu.mutable_health_start(),
                              gpu.mutable_health_start_summary(), gpu.mutable_health_end(), gpu.mutable_health_end_summary()}) {
      fix(text);
    }
    for (pb::JobFigure& f : *gpu.mutable_figures()) {
      for (std::string* text : {f.mutable_name(), f.mutable_instance(), f.mutable_unit(), f.mutable_source(), f.mutable_why()}) fix(text);
    }
  }
  return job;
}

Json job_json(const pb::Job& job) {
  Json out;
  out["id"] = job.id();
  out["user"] = job.user();
  out["started"] = utc_iso(from_unix_ms(job.started_unix_ms()));
  out["stopped"] = job.running() ? Json() : Json(utc_iso(from_unix_ms(job.stopped_unix_ms())));
  out["running"] = job.running();
  out["started_by"] = job.started_by();
  out["stopped_by"] = job.stopped_by();
  out["gpus"] = Json::array();
  for (const pb::JobGpu& gpu : job.gpus()) {
    Json g;
    g["index"] = gpu.index();
    g["uuid"] = gpu.uuid();
    g["bdf"] = gpu.bdf();
    g["name"] = gpu.name();
    g["baseline_sample"] = gpu.baseline_sample_unix_ms() == 0 ? Json() : Json(utc_iso(from_unix_ms(gpu.baseline_sample_unix_ms())));
    g["last_sample"] = gpu.last_sample_unix_ms() == 0 ? Json() : Json(utc_iso(from_unix_ms(gpu.last_sample_unix_ms())));
    g["health_start"] = {{"verdict", gpu.health_start()}, {"summary", gpu.health_start_summary()}};
    g["health_end"] = job.running() ? Json() : Json{{"verdict", gpu.health_end()}, {"summary", gpu.health_end_summary()}};
    Json figures = Json::array();
    for (const pb::JobFigure& f : gpu.figures()) {
      Json figure{{"name", f.name()}};
      if (!f.instance().empty()) figure["instance"] = f.instance();
      figure["unit"] = f.unit();
      figure["value"] = f.known() ? Json(f.value()) : Json();
      if (f.known() && !f.source().empty()) figure["source"] = f.source();
      if (!f.known() && !f.why().empty()) figure["why"] = f.why();
      figures.push_back(std::move(figure));
    }
    g["figures"] = std::move(figures);
    out["gpus"].push_back(std::move(g));
  }
  if (!job.problems().empty()) out["problems"] = Json(std::vector<std::string>(job.problems().begin(), job.problems().end()));
  return out;
}

}  // namespace

std::optional<WallClock::time_point> parse_since(const std::string& text, WallClock::time_point now, std::string& error) {
  if (text.empty()) {
    error = "--since: empty";
    return std::nullopt;
  }
  const auto digits = [](std::string_view s) { return !s.empty() && s.size() <= 12 && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }); };
  if (text.front() == '@' && digits(std::string_view(text).substr(1))) return WallClock::time_point(std::chrono::seconds(std::stoll(text.substr(1))));
  const char last = text.back();
  if ((last == 's' || last == 'm' || last == 'h' || last == 'd') && digits(std::string_view(text).substr(0, text.size() - 1))) {
    const long long n = std::stoll(text.substr(0, text.size() - 1));
    const long long seconds = n * (last == 's' ? 1 : last == 'm' ? 60 : last == 'h' ? 3600 : 86400);
    return now - std::chrono::seconds(seconds);
  }
  // A UTC date, or a date and time: 2026-11-29, 2026-11-29T08:00, 2026-11-29T08:00:00Z.
  std::tm tm{};
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  char tail[4] = {};
  const int n = std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%3s", &year, &month, &day, &hour, &minute, &second, tail);
  const bool shape = (n == 3 && text.size() == 10) || (n == 5 && text.size() == 16) || (n == 6 && text.size() == 19) ||
                     (n == 7 && text.size() == 20 && std::string_view(tail) == "Z");
  if (!shape || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    error = fmt::format("--since \"{}\": expected a duration back from now (30m, 12h, 7d), a UTC date or time "
                        "(2026-11-29, 2026-11-29T08:00:00Z) or @UNIX_SECONDS",
                        smi::printable_text(text));
    return std::nullopt;
  }
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return WallClock::from_time_t(::timegm(&tm));
}

int print_job(const pb::Job& answered, const JobOptions& options, Format format) {
  const pb::Job job = printable_job(answered);
  if (format == Format::json) {
    Json doc = document("job " + options.action);
    doc["job"] = job_json(job);
    if (options.action == "stop") doc["already_stopped"] = job.already_stopped();
    if (options.action == "start") doc["already_running"] = job.already_running();
    print_json(doc);
    return kExitOk;
  }
  if (format == Format::csv) {
    std::string out = csv_row({"job", "gpu", "uuid", "figure", "instance", "value", "unit", "source_or_why"});
    for (const pb::JobGpu& gpu : job.gpus()) {
      for (const pb::JobFigure& f : gpu.figures()) {
        out += csv_row({job.id(), std::to_string(gpu.index()), gpu.uuid(), f.name(), f.instance(),
                        f.known() ? fmt::format("{}", f.value()) : "", f.unit(), f.known() ? f.source() : f.why()});
      }
    }
    print(out);
    return kExitOk;
  }
  if (options.action == "start") {
    std::string gpus;
    for (const pb::JobGpu& gpu : job.gpus()) gpus += fmt::format("{}{}", gpus.empty() ? "" : ", ", gpu.index());
    print(fmt::format("{}, on GPU {}{}\n", job_heading(job), gpus,
                      job.already_running() ? " (it was running already with these GPUs: this start changed nothing)" : ""));
    return kExitOk;
  }
  std::string out = job_heading(job);
  if (options.action == "stop" && job.already_stopped()) out += " (it had stopped before this call)";
  out += "\n";
  for (const pb::JobGpu& gpu : job.gpus()) {
    out += fmt::format("\nGPU {}  {}  {}  {}\n", gpu.index(), gpu.bdf(), gpu.name(), gpu.uuid());
    out += fmt::format("  health at start: {} ({})\n", gpu.health_start(), gpu.health_start_summary());
    if (!job.running()) out += fmt::format("  health at stop:  {} ({})\n", gpu.health_end(), gpu.health_end_summary());
    Table table({"  FIGURE", "VALUE", "FROM"});
    for (const pb::JobFigure& f : gpu.figures()) {
      table.add({"  " + figure_name(f), figure_value(f), f.known() ? f.source() : f.why()});
    }
    out += table.str();
  }
  for (const std::string& problem : job.problems()) out += fmt::format("problem: {}\n", problem);
  print(out);
  return job.problems().empty() ? kExitOk : kExitReadFailure;
}

int print_job_list(const pb::ListJobsResponse& answered, Format format) {
  pb::ListJobsResponse jobs = answered;
  for (pb::Job& job : *jobs.mutable_jobs()) job = printable_job(std::move(job));
  if (format == Format::json) {
    Json doc = document("job list");
    doc["jobs"] = Json::array();
    for (const pb::Job& job : jobs.jobs()) doc["jobs"].push_back(job_json(job));
    doc["truncated"] = jobs.truncated();
    print_json(doc);
    return kExitOk;
  }
  // A row per job: its GPUs' energy summed, their busy averaged.
  const auto totals = [](const pb::Job& job) {
    std::optional<double> energy, busy;
    std::size_t busy_count = 0;
    for (const pb::JobGpu& gpu : job.gpus()) {
      if (const pb::JobFigure* e = find_figure(gpu, "energy"); e != nullptr && e->known()) energy = energy.value_or(0) + e->value();
      if (const pb::JobFigure* b = find_figure(gpu, "busy_mean"); b != nullptr && b->known()) {
        busy = busy.value_or(0) + b->value();
        ++busy_count;
      }
    }
    if (busy) *busy /= static_cast<double>(busy_count);
    return std::pair{energy, busy};
  };
  if (format == Format::csv) {
    std::string out = csv_row({"job", "user", "started", "stopped", "gpus", "energy_j", "busy_mean_percent"});
    for (const pb::Job& job : jobs.jobs()) {
      const auto [energy, busy] = totals(job);
      out += csv_row({job.id(), job.user(), utc_iso(from_unix_ms(job.started_unix_ms())),
                      job.running() ? "" : utc_iso(from_unix_ms(job.stopped_unix_ms())), std::to_string(job.gpus_size()),
                      energy ? fmt::format("{}", *energy) : "", busy ? fmt::format("{}", *busy) : ""});
    }
    print(out);
    return kExitOk;
  }
  Table table({"JOB", "USER", "STARTED", "STOPPED", "GPUS", "ENERGY", "BUSY"});
  for (const pb::Job& job : jobs.jobs()) {
    const auto [energy, busy] = totals(job);
    table.add({job.id(), job.user(), utc_iso(from_unix_ms(job.started_unix_ms())),
               job.running() ? "running" : utc_iso(from_unix_ms(job.stopped_unix_ms())), std::to_string(job.gpus_size()),
               energy ? fmt::format("{:.1f} J", *energy) : "unknown", busy ? fmt::format("{:.1f} %", *busy) : "unknown"});
  }
  std::string out = table.empty() ? std::string("no jobs started in that time\n") : table.str();
  if (jobs.truncated()) out += "(more jobs started since then: raise --limit or narrow --since)\n";
  print(out);
  return kExitOk;
}

}  // namespace hipstack::cli
