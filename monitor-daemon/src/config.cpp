// hipstack-smid's configuration file: parsing, validation with the line named, defaults
// (config.hpp).
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

std::vector<std::string> split_list(const std::string& value) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= value.size()) {
    std::size_t end = value.find(',', pos);
    if (end == std::string::npos) end = value.size();
    if (std::string item = trim(std::string_view(value).substr(pos, end - pos)); !item.empty()) out.push_back(std::move(item));
    pos = end + 1;
  }
  return out;
}

std::size_t parse_count(const std::string& value, const std::string& where, std::size_t low, std::size_t high) {
  std::size_t n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc{} || end != value.data() + value.size() || n < low || n > high) {
    throw std::runtime_error(fmt::format("{}: expected a whole number between {} and {}, got \"{}\"", where, low, high, value));
  }
  return n;
}

// Listeners, access, TLS and the limits on clients; false for a key that is not one of these.
bool apply_serving_key(Config& config, const std::string& key, const std::string& value, const std::string& where) {
  if (key == "http_listen" || key == "listen") {  // "listen": the name before gRPC arrived
    if (value.find(':') == std::string::npos) throw std::runtime_error(where + ": " + key + " must be host:port");
    config.listen = value;
  } else if (key == "grpc_listen") {
    check_grpc_listen(value, where);
    config.grpc_listen = value;
  } else if (key == "grpc_socket_group") {
    config.grpc_socket_group = value;
  } else if (key == "admin_group") {
    config.admin_group = value;
  } else if (key == "tls_cert") {
    config.tls_cert = value;
  } else if (key == "tls_key") {
    config.tls_key = value;
  } else if (key == "tls_client_ca") {
    config.tls_client_ca = value;
  } else if (key == "tls_admin_subjects") {
    config.tls_admin_subjects = split_list(value);
  } else if (key == "history_length") {
    config.history_length = parse_count(value, where, 1, 3600);
  } else if (key == "history_memory_mb") {
    config.history_memory = parse_count(value, where, 1, 1024) << 20;
  } else if (key == "grpc_flood_burst_bytes") {
    config.grpc_flood_burst_bytes = parse_count(value, where, 4096, std::size_t{1} << 30);
  } else if (key == "grpc_flood_bytes_per_second") {
    config.grpc_flood_bytes_per_second = parse_count(value, where, 0, std::size_t{1} << 30);
  } else if (key == "grpc_flood_refuse_s") {
    config.grpc_flood_refuse = std::chrono::seconds(parse_count(value, where, 0, 3600));
  } else if (key == "max_streams") {
    config.max_streams = parse_count(value, where, 1, 1024);
  } else if (key == "slow_consumer_limit_ms") {
    config.slow_consumer_limit = parse_ms(value, where);
  } else if (key == "stream_idle_limit_ms") {
    config.stream_idle_limit = parse_ms(value, where);
  } else if (key == "dbus") {
    if (value != "system" && value != "session" && value != "off") {
      throw std::runtime_error(where + ": dbus must be system, session or off, got \"" + value + "\"");
    }
    config.dbus = value;
  } else {
    return false;
  }
  return true;
}

// What is sampled, how often, from where, and judged by which health policy.
bool apply_sampling_key(Config& config, const std::string& key, const std::string& value, const std::string& where) {
  if (key == "fast_interval_ms") {
    config.fast_interval = parse_ms(value, where);
  } else if (key == "slow_interval_ms") {
    config.slow_interval = parse_ms(value, where);
  } else if (key == "costly_interval_ms") {
    config.costly_interval = parse_ms(value, where);
  } else if (key == "window_interval_ms") {
    config.window_interval = value == "0" ? std::chrono::milliseconds(0) : parse_ms(value, where);
  } else if (key == "read_deadline_ms") {
    config.read_deadline = parse_ms(value, where);
  } else if (key == "metrics") {
    for (std::string& name : split_list(value)) {
      if (smi::find_metric(name) == nullptr) throw std::runtime_error(fmt::format("{}: unknown metric \"{}\"", where, name));
      config.metrics.push_back(std::move(name));
    }
  } else if (key == "metrics_profile") {
    const auto profile = parse_series_profile(value);
    if (!profile) throw std::runtime_error(fmt::format("{}: metrics_profile must be default or full, got \"{}\"", where, value));
    config.metrics_profile = *profile;
  } else if (key == "sysfs_root") {
    config.sysfs_root = value;
  } else if (key == "procfs_root") {
    config.procfs_root = value;
  } else if (key == "host") {
    if (smi::holds_raw_bytes(value)) {
      throw std::runtime_error(fmt::format("{}: host must be printable UTF-8 text, got \"{}\"", where, smi::printable_text(value)));
    }
    config.host = value;
  } else if (key == "health_policy") {
    config.health_policy = value;
    try {
      config.policy = smi::HealthPolicy::from_file(value);
    } catch (const smi::Error& e) {
      throw std::runtime_error(fmt::format("{}: health_policy: {}", where, e.what()));
    }
  } else {
    return false;
  }
  return true;
}

// Attribution of GPUs to containers and the job accounting database.
bool apply_node_key(Config& config, const std::string& key, const std::string& value, const std::string& where) {
  if (key == "attribution") {
    if (value == "auto") config.attribution = Config::Attribution::automatic;
    else if (value == "on") config.attribution = Config::Attribution::on;
    else if (value == "off") config.attribution = Config::Attribution::off;
    else throw std::runtime_error(fmt::format("{}: attribution must be auto, on or off, got \"{}\"", where, value));
  } else if (key == "kubelet_socket") {
    if (!value.starts_with('/')) throw std::runtime_error(fmt::format("{}: kubelet_socket must be an absolute path", where));
    config.kubelet_socket = value;
  } else if (key == "kubelet_log_dir") {
    if (!value.starts_with('/')) throw std::runtime_error(fmt::format("{}: kubelet_log_dir must be an absolute path", where));
    config.kubelet_log_dir = value;
  } else if (key == "attribution_interval_ms") {
    config.attribution_interval = parse_ms(value, where);
    // Each look scans every process's open files: not a busy loop.
    if (config.attribution_interval < std::chrono::milliseconds(100)) {
      throw std::runtime_error(fmt::format("{}: attribution_interval_ms must be at least 100", where));
    }
  } else if (key == "job_db") {
    if (value != "off" && !value.starts_with('/')) {
      throw std::runtime_error(fmt::format("{}: job_db must be an absolute path or off", where));
    }
    config.job_db = value;
  } else if (key == "job_mapping_dir") {
    if (!value.empty() && !value.starts_with('/')) {
      throw std::runtime_error(fmt::format("{}: job_mapping_dir must be an absolute path", where));
    }
    config.job_mapping_dir = value;
  } else if (key == "job_retention_days") {
    config.job_retention = std::chrono::hours(24 * parse_count(value, where, 0, 36500));
  } else if (key == "job_save_interval_s") {
    config.job_save_interval = std::chrono::seconds(parse_count(value, where, 1, 3600));
  } else if (key == "job_max_running_days") {
    config.job_max_running = std::chrono::hours(24 * parse_count(value, where, 0, 3650));
  } else if (key == "error_db") {
    if (value != "off" && !value.starts_with('/')) {
      throw std::runtime_error(fmt::format("{}: error_db must be an absolute path or off", where));
    }
    config.error_db = value;
  } else if (key == "error_retention_days") {
    config.error_retention = std::chrono::hours(24 * parse_count(value, where, 0, 36500));
  } else if (key == "error_max_rows") {
    config.error_max_rows = parse_count(value, where, 1000, 10000000);
  } else if (key == "error_max_age_s") {
    config.error_max_age = std::chrono::seconds(parse_count(value, where, 1, 366 * 86400));
  } else {
    return false;
  }
  return true;
}

}  // namespace

void check_grpc_listen(const std::string& value, const std::string& where) {
  if (value == "off") return;
  if (value.starts_with("unix:")) {
    if (value.size() <= 5 || value[5] != '/') throw std::runtime_error(where + ": grpc_listen unix:PATH needs an absolute path");
    return;
  }
  if (value.find(':') == std::string::npos) {
    throw std::runtime_error(where + ": grpc_listen must be unix:PATH, host:port or off, got \"" + value + "\"");
  }
}

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
    if (!apply_serving_key(config, key, value, where) && !apply_sampling_key(config, key, value, where) &&
        !apply_node_key(config, key, value, where)) {
      throw std::runtime_error(fmt::format("{}: unknown key \"{}\"", where, key));
    }
  }
  const bool tls = !config.tls_cert.empty() || !config.tls_key.empty() || !config.tls_client_ca.empty();
  if (tls && (config.tls_cert.empty() || config.tls_key.empty())) {
    throw std::runtime_error(path + ": tls_cert and tls_key go together");
  }
  if (!config.tls_admin_subjects.empty() && config.tls_client_ca.empty()) {
    throw std::runtime_error(path + ": tls_admin_subjects needs tls_client_ca (client certificates are verified against it)");
  }
  return config;
}

}  // namespace hipstack::smid
