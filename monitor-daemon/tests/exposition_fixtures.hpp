// Shared by the exposition tests (test_exposition.cpp, test_series_profile.cpp): hand-built
// snapshots and a strict parser of the text format 0.0.4.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "prometheus.hpp"
#include "sampler.hpp"

namespace exposition_test {


using hipstack::smid::DeviceSnapshot;
using hipstack::smid::ExpositionContext;
using hipstack::smid::Sampler;
using hipstack::smid::escape_help;
using hipstack::smid::escape_label_value;
using hipstack::smid::family_name;
using hipstack::smid::render_metrics;
namespace smi = hipstack::smi;
using Clock = std::chrono::steady_clock;
using Labels = std::map<std::string, std::string>;

// ---------------------------------------------------------------------------------------------
// Building snapshots

inline const smi::MetricInfo& metric(std::string_view name) {
  const smi::MetricInfo* info = smi::find_metric(name);
  if (info == nullptr) throw std::runtime_error("no catalogue metric " + std::string(name));
  return *info;
}

inline smi::Reading reading(std::string_view name, smi::Value value, std::string instance = {}) {
  smi::Reading r;
  r.id = metric(name).id;
  r.instance = std::move(instance);
  r.status = smi::Status::ok;
  r.value = std::move(value);
  return r;
}

inline smi::Reading real(std::string_view name, double v, std::string instance = {}) {
  return reading(name, v, std::move(instance));
}
inline smi::Reading integer(std::string_view name, std::int64_t v, std::string instance = {}) {
  return reading(name, v, std::move(instance));
}
inline smi::Reading text(std::string_view name, std::string v, std::string instance = {}) {
  return reading(name, std::move(v), std::move(instance));
}

inline smi::DeviceSummary device(std::uint32_t index, std::string name = "AMD Instinct MI300X") {
  smi::DeviceSummary d;
  d.index = index;
  d.vendor = "amd";
  d.backend = "amdgpu";
  d.bdf = "0000:0" + std::to_string(index) + ":00.0";
  d.uuid = "GPU-0000000" + std::to_string(index);
  d.name = std::move(name);
  return d;
}

struct SnapshotBuilder {
  std::shared_ptr<DeviceSnapshot> snap = std::make_shared<DeviceSnapshot>();
  std::shared_ptr<hipstack::smid::SlowSample> slow = std::make_shared<hipstack::smid::SlowSample>();  // snap's, still open to changes
  explicit SnapshotBuilder(smi::DeviceSummary d) {
    snap->device = std::move(d);
    snap->have_live = true;
    snap->live_at = Clock::now();
    slow->at = Clock::now();
    snap->slow = slow;
    fact(text("uuid", snap->device.uuid));  // identified, as a GPU that answers is
  }
  SnapshotBuilder& live(smi::Reading r) { snap->live.push_back(std::move(r)); return *this; }
  SnapshotBuilder& fact(smi::Reading r) { slow->facts.push_back(std::move(r)); return *this; }
  SnapshotBuilder& finding(std::string check, smi::Verdict v) {
    smi::HealthFinding f;
    f.check = std::move(check);
    f.verdict = v;
    slow->health.findings.push_back(std::move(f));
    return *this;
  }
  SnapshotBuilder& overall(smi::Verdict v) { slow->health.overall = v; return *this; }
  Sampler::View view(bool stale = false) const { return Sampler::View{snap, stale}; }
};

inline const ExpositionContext kContext{"node-a", "9.8.7"};

// ---------------------------------------------------------------------------------------------
// Parsing the page (text format 0.0.4), strictly enough to catch escaping and ordering mistakes

struct Sample {
  std::string name;
  Labels labels;
  std::string value;  // as written
  std::string line;
};

struct Page {
  std::string body;
  std::vector<Sample> samples;
  std::map<std::string, std::string> help;  // raw (escaped) HELP text
  std::map<std::string, std::string> type;
  std::vector<std::string> families;        // in order of their TYPE lines
};

inline bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
inline bool is_name_char(char c) { return is_name_start(c) || std::isdigit(static_cast<unsigned char>(c)); }

// Parses one sample line; reports malformed lines as test failures.
inline std::optional<Sample> parse_sample(const std::string& line) {
  Sample s;
  s.line = line;
  std::size_t i = 0;
  if (line.empty() || !is_name_start(line[0])) return std::nullopt;
  while (i < line.size() && is_name_char(line[i])) ++i;
  s.name = line.substr(0, i);
  if (i < line.size() && line[i] == '{') {
    ++i;
    while (i < line.size() && line[i] != '}') {
      const std::size_t key_start = i;
      if (!std::isalpha(static_cast<unsigned char>(line[i])) && line[i] != '_') return std::nullopt;
      while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_')) ++i;
      const std::string key = line.substr(key_start, i - key_start);
      if (i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"') return std::nullopt;
      i += 2;
      std::string value;
      for (;;) {
        if (i >= line.size()) return std::nullopt;
        const char c = line[i++];
        if (c == '"') break;
        if (c == '\\') {
          if (i >= line.size()) return std::nullopt;
          const char e = line[i++];
          if (e == '\\') value += '\\';
          else if (e == '"') value += '"';
          else if (e == 'n') value += '\n';
          else return std::nullopt;  // no other escape is defined for label values
        } else {
          value += c;
        }
      }
      if (!s.labels.emplace(key, value).second) return std::nullopt;  // duplicate label name
      if (i < line.size() && line[i] == ',') ++i;
    }
    if (i >= line.size()) return std::nullopt;
    ++i;  // '}'
  }
  if (i >= line.size() || line[i] != ' ') return std::nullopt;
  s.value = line.substr(i + 1);
  if (s.value.empty() || s.value.find(' ') != std::string::npos) return std::nullopt;
  return s;
}

inline Page parse_page(const std::string& body) {
  Page page;
  page.body = body;
  EXPECT_FALSE(body.empty());
  EXPECT_EQ(body.back(), '\n') << "the page must end with a newline";
  std::istringstream in(body);
  std::string line;
  std::string current;  // family of the latest TYPE line
  std::set<std::string> closed;
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0) {
      const auto space = line.find(' ', 7);
      const std::string name = line.substr(7, space - 7);
      EXPECT_TRUE(page.help.emplace(name, space == std::string::npos ? "" : line.substr(space + 1)).second)
          << "second HELP for " << name;
    } else if (line.rfind("# TYPE ", 0) == 0) {
      const auto space = line.find(' ', 7);
      if (space == std::string::npos) {
        ADD_FAILURE() << "TYPE line without a type: " << line;
        continue;
      }
      const std::string name = line.substr(7, space - 7);
      EXPECT_TRUE(page.type.emplace(name, line.substr(space + 1)).second) << "second TYPE for " << name;
      EXPECT_TRUE(page.help.count(name)) << "TYPE before HELP for " << name;
      if (!current.empty()) closed.insert(current);
      current = name;
      page.families.push_back(name);
    } else if (line.empty() || line[0] == '#') {
      ADD_FAILURE() << "unexpected line: \"" << line << "\"";
    } else {
      auto sample = parse_sample(line);
      if (!sample) {
        ADD_FAILURE() << "malformed sample line: " << line;
        continue;
      }
      // Samples of one family are contiguous and follow its TYPE line (gauges and counters only).
      EXPECT_EQ(sample->name, current) << "sample outside its family: " << line;
      EXPECT_FALSE(closed.count(sample->name)) << "family split in two: " << line;
      page.samples.push_back(std::move(*sample));
    }
  }
  return page;
}

inline std::vector<Sample> find(const Page& page, const std::string& name, const Labels& subset = {}) {
  std::vector<Sample> out;
  for (const Sample& s : page.samples) {
    if (s.name != name) continue;
    bool match = true;
    for (const auto& [k, v] : subset) {
      const auto it = s.labels.find(k);
      if (it == s.labels.end() || it->second != v) match = false;
    }
    if (match) out.push_back(s);
  }
  return out;
}

// Parses a sample value in the classic form only: no locale, the whole token must be consumed.
inline std::optional<double> classic_number(const std::string& text) {
  if (text == "NaN") return std::nan("");
  if (text == "+Inf") return HUGE_VAL;
  if (text == "-Inf") return -HUGE_VAL;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The one value of `name` with these labels.
inline double value_of(const Page& page, const std::string& name, const Labels& subset) {
  const auto found = find(page, name, subset);
  if (found.size() != 1) {
    ADD_FAILURE() << found.size() << " samples of " << name << " match, expected 1";
    return std::nan("");
  }
  const auto v = classic_number(found[0].value);
  if (!v) {
    ADD_FAILURE() << "not a classic number: " << found[0].line;
    return std::nan("");
  }
  return *v;
}


}  // namespace exposition_test
