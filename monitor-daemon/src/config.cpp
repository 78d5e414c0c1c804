#include "config.hpp"

#include <fmt/format.h>
#include <hipstack/smi.hpp>

#include <charconv>
#include <fstream>
#include <stdexcept>

namespace hipstack::smid {
namespace {

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return std::string(text.substr(first, text.find_last_not_of(" \t\r") - first + 1));
}

std::chrono::milliseconds parse_ms(const std::string& value, const std::string& where) {
  long long ms = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
  if (ec != std::errc{} || end != value.data() + value.size() || ms < 10 || ms > 3'600'000) {
    throw std::runtime_error(fmt::format("{}: expected milliseconds between 10 and 3600000, got \"{}\"", where, value));
  }
  return std::chrono::milliseconds(ms);
}

}  // namespace

Config load_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}", path));
  Config config;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    if (trim(line).empty()) continue;
    const std::string where = fmt::format("{}:{}", path, number);
    const auto equals = line.find('=');
    if (equals == std::string::npos) throw std::runtime_error(where + ": expected \"key = value\"");
    const std::string key = trim(std::string_view(line).substr(0, equals));
    const std::string value = trim(std::string_view(line).substr(equals + 1));
    if (key == "listen") {
      if (value.find(':') == std::string::npos) throw std::runtime_error(where + ": listen must be host:port");
      config.listen = value;
    } else if (key == "fast_interval_ms") {
      config.fast_interval = parse_ms(value, where);
    } else if (key == "slow_interval_ms") {
      config.slow_interval = parse_ms(value, where);
    } else if (key == "read_deadline_ms") {
      config.read_deadline = parse_ms(value, where);
    } else if (key == "metrics") {
      std::size_t pos = 0;
      while (pos <= value.size()) {
        std::size_t end = value.find(',', pos);
        if (end == std::string::npos) end = value.size();
        const std::string name = trim(std::string_view(value).substr(pos, end - pos));
        if (!name.empty()) {
          if (smi::find_metric(name) == nullptr) throw std::runtime_error(fmt::format("{}: unknown metric \"{}\"", where, name));
          config.metrics.push_back(name);
        }
        pos = end + 1;
      }
    } else if (key == "sysfs_root") {
      config.sysfs_root = value;
    } else if (key == "procfs_root") {
      config.procfs_root = value;
    } else if (key == "host") {
      config.host = value;
    } else if (key == "health_policy") {
      config.health_policy = value;
    } else {
      throw std::runtime_error(fmt::format("{}: unknown key \"{}\"", where, key));
    }
  }
  return config;
}

}  // namespace hipstack::smid
