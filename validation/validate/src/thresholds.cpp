// thresholds.cpp: reading thresholds.json, strictly: an unknown key or a wrong type is an error
// naming the file and the place, so a typo cannot silently turn a check off.
#include "thresholds.hpp"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace hipstack::validate {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& path, const std::string& where, const std::string& what) {
  throw std::runtime_error(path + ": " + where + ": " + what);
}

std::map<std::string, double> numbers(const std::string& path, const std::string& where, const json& object,
                                      std::initializer_list<const char*> allowed) {
  if (!object.is_object()) fail(path, where, "must be an object");
  std::map<std::string, double> out;
  for (const auto& item : object.items()) {
    const std::string key = item.key();  // (a structured binding cannot be captured before clang 16)
    const json& value = item.value();
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* name) { return key == name; }))
      fail(path, where + "." + key, "unknown key");
    if (!value.is_number() || value.get<double>() <= 0) fail(path, where + "." + key, "must be a number above 0");
    out[key] = value.get<double>();
  }
  return out;
}

DeviceClass read_class(const std::string& path, const json& entry, std::size_t index) {
  const std::string where = "classes[" + std::to_string(index) + "]";
  if (!entry.is_object()) fail(path, where, "must be an object");
  DeviceClass c;
  for (const auto& [key, value] : entry.items()) {
    const std::string at = where + "." + key;
    if (key == "class") {
      if (!value.is_string() || value.get<std::string>().empty()) fail(path, at, "must be a non-empty string");
      c.name = value.get<std::string>();
    } else if (key == "match") {
      if (!value.is_object()) fail(path, at, "must be an object");
      for (const auto& [mkey, mvalue] : value.items()) {
        if (mkey == "vendor") {
          if (!mvalue.is_string() || (mvalue != "amd" && mvalue != "nvidia")) fail(path, at + ".vendor", "must be \"amd\" or \"nvidia\"");
          c.vendor = mvalue.get<std::string>();
        } else if (mkey == "name_contains") {
          if (!mvalue.is_array() || mvalue.empty()) fail(path, at + ".name_contains", "must be a non-empty list of strings");
          for (const json& s : mvalue) {
            if (!s.is_string() || s.get<std::string>().empty()) fail(path, at + ".name_contains", "must hold non-empty strings");
            c.name_contains.push_back(s.get<std::string>());
          }
        } else {
          fail(path, at + "." + mkey, "unknown key");
        }
      }
    } else if (key == "compute_units") {
      if (!value.is_number_integer() || value.get<int>() <= 0) fail(path, at, "must be a whole number above 0");
      c.compute_units = value.get<int>();
    } else if (key == "peak") {
      c.peak = numbers(path, at, value, {"memory_gbps", "fp32_tflops", "fp32_vector_tflops", "bf16_tflops", "fp64_tflops"});
    } else if (key == "expect") {
      c.expect = numbers(path, at, value, {"memory_bandwidth", "transfer", "gemm_fp32", "gemm_bf16", "gemm_fp64",
                                           "stress_fp32", "p2p_gbps"});
      for (const auto& [name, share] : c.expect)
        if (name != "p2p_gbps" && share > 1.0) fail(path, at + "." + name, "is a share of the peak: at most 1");
    } else if (key != "comment") {
      fail(path, at, "unknown key");
    }
  }
  if (c.name.empty()) fail(path, where, "has no \"class\" name");
  return c;
}

}  // namespace

bool DeviceClass::matches(const std::string& device_vendor, const std::string& device_name) const {
  if (!vendor.empty() && vendor != device_vendor) return false;
  if (name_contains.empty()) return true;
  return std::any_of(name_contains.begin(), name_contains.end(),
                     [&](const std::string& part) { return device_name.find(part) != std::string::npos; });
}

std::optional<double> DeviceClass::peak_for(const std::string& key, int device_compute_units) const {
  const auto it = peak.find(key);
  if (it == peak.end()) return std::nullopt;
  if (compute_units > 0 && device_compute_units > 0 && device_compute_units < compute_units)
    return it->second * device_compute_units / compute_units;
  return it->second;
}

std::optional<double> DeviceClass::expected(const std::string& key) const {
  const auto it = expect.find(key);
  if (it == expect.end()) return std::nullopt;
  return it->second;
}

Thresholds Thresholds::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot be read");
  json document;
  try {
    document = json::parse(in);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e999
    throw std::runtime_error(path + ": not valid JSON: " + e.what());
  }
  if (!document.is_object()) fail(path, "top level", "must be an object");
  if (!document.contains("version") || document["version"] != 1) fail(path, "version", "must be 1");
  if (!document.contains("classes") || !document["classes"].is_array() || document["classes"].empty())
    fail(path, "classes", "must be a non-empty list");
  for (const auto& [key, value] : document.items())
    if (key != "version" && key != "classes" && key != "comment") fail(path, key, "unknown key");
  Thresholds t;
  t.source = path;
  for (std::size_t i = 0; i < document["classes"].size(); ++i) t.classes.push_back(read_class(path, document["classes"][i], i));
  return t;
}

const DeviceClass* Thresholds::classify(const std::string& vendor, const std::string& name) const {
  for (const DeviceClass& c : classes)
    if (c.matches(vendor, name)) return &c;
  return nullptr;
}

std::string default_thresholds_path() {
  std::vector<std::filesystem::path> candidates{"/etc/hipstack/validate-thresholds.json"};
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) candidates.push_back(self.parent_path().parent_path() / "share/hipstack/validation/thresholds.json");
  if (*HIPSTACK_VALIDATE_SOURCE_THRESHOLDS) candidates.emplace_back(HIPSTACK_VALIDATE_SOURCE_THRESHOLDS);
  for (const auto& path : candidates)
    if (::access(path.c_str(), R_OK) == 0) return path.string();
  return candidates.back().string();  // missing: loading it names the path
}

}  // namespace hipstack::validate
