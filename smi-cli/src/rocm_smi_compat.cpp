// `hipstack-smi --rocm-smi ...`: rocm-smi's flags and its output, answered from the library
// (rocm_smi_compat.hpp).
#include "rocm_smi_compat.hpp"

#include <fmt/format.h>
#include <hipstack/foreign_names.hpp>
#include <hipstack/smi.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"

namespace hipstack::cli {
namespace {

using smi::Reading;

// One device's readings, found by the key rocm-smi prints: each key's metrics and instance are a
// row of the library's rocm-smi table (smi-lib/src/foreign/rocm_smi.cpp), so that this file names no
// metric itself.
class Facts {
 public:
  Facts(std::uint32_t index, std::vector<Reading> readings) : index_(index), readings_(std::move(readings)) {}
  [[nodiscard]] std::uint32_t index() const { return index_; }
  // The reading of `key`: its first metric the GPU gives, or (`position`) the row's metric there.
  [[nodiscard]] const Reading* get(std::string_view key, std::optional<std::size_t> position = std::nullopt) const {
    const smi::ForeignName& row = row_of(key);
    for (std::size_t i = 0; i < row.from.size(); ++i) {
      if (position && *position != i) continue;
      if (const Reading* r = find(row.from.begin()[i], row.instance)) return r;
    }
    return nullptr;
  }
  [[nodiscard]] std::string text(std::string_view key) const {
    const Reading* r = get(key);
    return r != nullptr && r->text() ? std::string(*r->text()) : "N/A";
  }
  // A number printed as rocm-smi prints it: as a whole number, or (`as_float`) as Python prints a
  // float (rocm-smi 5.2.3's temperatures and powers: "41.045", "155.0").
  [[nodiscard]] std::string number(std::string_view key, bool as_float = false) const {
    const Reading* r = get(key);
    if (r == nullptr || !r->number()) return "N/A";
    if (!as_float) return fmt::format("{:.0f}", *r->number());
    std::string text = fmt::format("{}", *r->number());  // the shortest form that reads back, as Python's repr
    if (text.find_first_of(".en") == std::string::npos) text += ".0";
    return text;
  }

 private:
  static const smi::ForeignName& row_of(std::string_view key) {
    const smi::ForeignName* row = smi::find_foreign_name(smi::ForeignTool::rocm_smi, key);
    if (row == nullptr) throw std::logic_error(fmt::format("rocm-smi key \"{}\" is not in the library's rocm-smi table", key));
    return *row;
  }
  [[nodiscard]] const Reading* find(smi::MetricId id, std::string_view instance) const {
    for (const Reading& r : readings_) {
      if (r.id == id && r.instance == instance && r.ok()) return &r;
    }
    return nullptr;
  }

  std::uint32_t index_;
  std::vector<Reading> readings_;
};

// One "key: value" of rocm-smi's output. A few facts print differently as text than in JSON (the
// fan: one "Fan Level: L (S%)" line against two keys); a text-only field with no value prints its key alone.
struct RocmSmiField {
  enum class In { both, json, text };
  std::string key;
  std::string value;
  In in = In::both;
};
using RocmSmiFields = std::vector<RocmSmiField>;

// rocm-smi 5.2.3 showCurrentFans (getFanSpeed): the level is pwm1 itself, the share is
// round(round(pwm1 / pwm1_max * 100, 2)) with Python's rounding (halves to even), 0 without
// pwm1_max. A level or share of 0 prints "Unable to detect fan speed for GPU N" and nothing else
// (nothing in JSON); otherwise "Fan RPM" follows when the GPU reports it.
RocmSmiFields fan_fields(const Facts& f) {
  const Reading* level = f.get("Fan speed (%)", 0);
  const Reading* max = f.get("Fan speed (%)", 1);
  const double pwm = level != nullptr ? level->number().value_or(0) : 0;
  const double full = max != nullptr ? max->number().value_or(0) : 0;
  const double share = full > 0 ? std::nearbyint(std::nearbyint(pwm / full * 100 * 100) / 100) : 0;
  if (pwm == 0 || share == 0) return {{fmt::format("Unable to detect fan speed for GPU {}", f.index()), "", RocmSmiField::In::text}};
  RocmSmiFields out = {{"Fan Level", fmt::format("{:.0f} ({:.0f}%)", pwm, share), RocmSmiField::In::text},
                       {"Fan speed (level)", fmt::format("{:.0f}", pwm), RocmSmiField::In::json},
                       {"Fan speed (%)", fmt::format("{:.0f}", share), RocmSmiField::In::json}};
  if (f.get("Fan RPM") != nullptr) out.push_back({"Fan RPM", f.number("Fan RPM")});
  return out;
}

struct Section {
  const char* flag;       // the rocm-smi flag that asks for it
  const char* short_flag; // "" when none
  const char* title;
  std::function<RocmSmiFields(const Facts&)> fields;
};

RocmSmiFields clock_fields(const Facts& f) {
  RocmSmiFields out;
  for (const std::string_view name : {"dcefclk", "fclk", "mclk", "sclk", "socclk"}) {
    const std::string speed = fmt::format("{} clock speed:", name), level = fmt::format("{} clock level:", name);
    const Reading* now = f.get(speed);
    if (now == nullptr) continue;
    // The starred pp_dpm line's number, as rocm-smi prints it (the clock itself may come from a
    // better source than that line, so matching it against the levels would miss).
    if (const Reading* index = f.get(level); index != nullptr && index->text()) {
      out.push_back(RocmSmiField{level, std::string(*index->text())});
    }
    out.push_back(RocmSmiField{speed, fmt::format("({:.0f}Mhz)", *now->number())});
  }
  return out;
}

// rocm-smi 5.2.3's SKU: the VBIOS part number's second '-'-separated field, at most 6 characters
// ("113-D534-R66E" -> "D534", "113-EXT90249-100" -> "EXT902"), as it printed on every recorded capture.
std::string sku_of(const std::string& vbios) {
  const auto first = vbios.find('-');
  if (first == std::string::npos) return "N/A";
  const std::string field = vbios.substr(first + 1, vbios.find('-', first + 1) - first - 1);
  return field.substr(0, 6);
}

std::string upper_bdf(std::string bdf) {
  std::transform(bdf.begin(), bdf.end(), bdf.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return bdf;
}

// A section of keys printed as they are read: texts, or numbers (whole, or as Python floats).
std::function<RocmSmiFields(const Facts&)> texts(std::initializer_list<const char*> keys) {
  std::vector<std::string> names(keys.begin(), keys.end());
  return [names](const Facts& f) {
    RocmSmiFields out;
    for (const std::string& key : names) out.push_back({key, f.text(key)});
    return out;
  };
}
std::function<RocmSmiFields(const Facts&)> numbers(std::initializer_list<const char*> keys, bool as_float = false) {
  std::vector<std::string> names(keys.begin(), keys.end());
  return [names, as_float](const Facts& f) {
    RocmSmiFields out;
    for (const std::string& key : names) out.push_back({key, f.number(key, as_float)});
    return out;
  };
}

const std::vector<Section>& sections() {
  static const std::vector<Section> all = {
      {"--showid", "-i", "ID", texts({"GPU ID"})},
      {"--showvbios", "-v", "VBIOS", texts({"VBIOS version"})},
      {"--showtemp", "-t", "Temperature",
       numbers({"Temperature (Sensor edge) (C)", "Temperature (Sensor junction) (C)", "Temperature (Sensor memory) (C)",
                "Temperature (Sensor HBM 0) (C)", "Temperature (Sensor HBM 1) (C)", "Temperature (Sensor HBM 2) (C)",
                "Temperature (Sensor HBM 3) (C)"},
               true)},
      {"--showpower", "-P", "Power Consumption", numbers({"Average Graphics Package Power (W)"}, true)},
      {"--showclocks", "-c", "Current clock frequencies", clock_fields},
      {"--showfan", "-f", "Current Fan Metric", fan_fields},
      {"--showperflevel", "-p", "Show Performance Level", texts({"Performance Level"})},
      {"--showmaxpower", "-M", "Power Cap", numbers({"Max Graphics Package Power (W)"}, true)},
      {"--showuse", "-u", "% time GPU is busy", numbers({"GPU use (%)"})},
      {"--showmemuse", "", "Current Memory Use", numbers({"GPU memory use (%)"})},
      {"--showvoltage", "", "Current voltage", numbers({"Voltage (mV)"})},
      {"--showbus", "-b", "PCI Bus ID", [](const Facts& f) { return RocmSmiFields{{"PCI Bus", upper_bdf(f.text("PCI Bus"))}}; }},
      {"--showuniqueid", "", "Unique ID",
       [](const Facts& f) {
         const std::string id = f.text("Unique ID");
         return RocmSmiFields{{"Unique ID", id == "N/A" ? id : "0x" + id}};
       }},
      {"--showserial", "", "Serial Number", texts({"Serial Number"})},
      {"--showmemvendor", "", "Memory Vendor", texts({"GPU memory vendor"})},
      {"--showproductname", "", "Product Info",
       [](const Facts& f) {
         RocmSmiFields out = texts({"Card series", "Card model", "Card vendor"})(f);
         out.push_back({"Card SKU", sku_of(f.text("Card SKU"))});
         return out;
       }},
  };
  return all;
}

// --showmeminfo TYPE...: vram, vis_vram, gtt or all.
RocmSmiFields meminfo_fields(const Facts& f, const std::set<std::string>& types) {
  RocmSmiFields out;
  const struct {
    const char* type;
    const char* label;
  } kinds[] = {{"vram", "VRAM"}, {"vis_vram", "VIS_VRAM"}, {"gtt", "GTT"}};
  for (const auto& kind : kinds) {
    if (types.count("all") == 0 && types.count(kind.type) == 0) continue;
    for (const char* what : {"Total Memory (B)", "Total Used Memory (B)"}) {
      const std::string key = fmt::format("{} {}", kind.label, what);
      out.push_back(RocmSmiField{key, f.number(key)});
    }
  }
  return out;
}

std::string banner(std::string_view title) {
  constexpr std::size_t kWidth = 80;
  if (title.empty()) return std::string(kWidth, '=') + "\n";
  const std::string middle = fmt::format(" {} ", title);
  const std::size_t left = (kWidth - std::min(kWidth, middle.size())) / 2;
  const std::size_t right = kWidth - std::min(kWidth, middle.size() + left);
  return std::string(left, '=') + middle + std::string(right, '=') + "\n";
}

int usage_error(const std::string& what) {
  std::fprintf(stderr,
               "hipstack-smi --rocm-smi: %s\nsupported: -a -d N... --json --showmeminfo {vram,vis_vram,gtt,all}... "
               "--showdriverversion and",
               what.c_str());
  for (const Section& s : sections()) std::fprintf(stderr, " %s", s.flag);
  std::fprintf(stderr, "\n");
  return kExitBadArguments;
}

// What a rocm-smi command line asks for.
struct RocmSmiRequest {
  bool json = false;
  bool all = false;
  bool driver = false;
  std::set<std::string> wanted;    // section flags
  std::set<std::string> meminfo;   // vram, vis_vram, gtt, all
  std::vector<std::string> device_selectors;
  smi::OpenOptions open;
};

// rocm-smi's flags into `r`; an exit code (after the usage message) for one it does not take.
std::optional<int> parse_rocm_smi_args(int argc, char** argv, int compat_flag, RocmSmiRequest& r) {
  for (int i = 1; i < argc; ++i) {
    if (i == compat_flag) continue;
    const std::string arg = argv[i];
    auto values = [&](std::vector<std::string>& into) {
      while (i + 1 < argc && argv[i + 1][0] != '-') into.emplace_back(argv[++i]);
    };
    if (arg == "--json") {
      r.json = true;
    } else if (arg == "-a" || arg == "--showallinfo") {
      r.all = true;
    } else if (arg == "--showdriverversion") {
      r.driver = true;
    } else if (arg == "-d" || arg == "--device") {
      values(r.device_selectors);
      if (r.device_selectors.empty()) return usage_error("-d needs device indices");
    } else if (arg == "--showmeminfo") {
      std::vector<std::string> types;
      values(types);
      if (types.empty()) return usage_error("--showmeminfo needs vram, vis_vram, gtt or all");
      for (const std::string& t : types) {
        if (t != "vram" && t != "vis_vram" && t != "gtt" && t != "all") return usage_error("unknown memory type " + t);
        r.meminfo.insert(t);
      }
    } else if (arg == "--sysfs-root" && i + 1 < argc) {
      r.open.sysfs_root = argv[++i];
    } else if (arg == "--procfs-root" && i + 1 < argc) {
      r.open.procfs_root = argv[++i];
    } else {
      const auto& known = sections();
      const auto it = std::find_if(known.begin(), known.end(),
                                   [&arg](const Section& s) { return arg == s.flag || (*s.short_flag && arg == s.short_flag); });
      if (it == known.end()) return usage_error("unsupported flag " + arg);
      r.wanted.insert(it->flag);
    }
  }
  return std::nullopt;
}

std::string rocm_smi_json(const std::vector<Facts>& facts, const RocmSmiRequest& r, const std::string& driver_version) {
  const auto& wanted = r.wanted;
  const auto& meminfo = r.meminfo;
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  for (const Facts& f : facts) {
    auto& card = doc[fmt::format("card{}", f.index())];
    card = nlohmann::ordered_json::object();
    for (const Section& s : sections()) {
      if (wanted.count(s.flag) == 0) continue;
      for (const RocmSmiField& field : s.fields(f)) {
        if (field.in != RocmSmiField::In::text) card[field.key] = field.value;
      }
    }
    for (const RocmSmiField& field : meminfo_fields(f, meminfo)) card[field.key] = field.value;
  }
  if (r.driver) doc["system"]["Driver version"] = driver_version;
  return doc.dump() + "\n";
}

std::string rocm_smi_text(const std::vector<Facts>& facts, const RocmSmiRequest& r, const std::string& driver_version) {
  const auto& wanted = r.wanted;
  const auto& meminfo = r.meminfo;
  const bool driver = r.driver;
  std::string out = "\n\n" + banner("ROCm System Management Interface");
  if (driver) out += banner("Version of System Component") + "Driver version: " + driver_version + "\n" + banner("");
  auto emit = [&](const char* title, const std::function<RocmSmiFields(const Facts&)>& fields) {
    out += banner(title);
    for (const Facts& f : facts) {
      const std::uint32_t index = f.index();
      for (const RocmSmiField& field : fields(f)) {
        if (field.in == RocmSmiField::In::json) continue;
        // JSON keys of clock levels end in ':' ("sclk clock level:"); text lines add their own.
        const std::string& key = field.key;
        const std::string label = !key.empty() && key.back() == ':' ? key.substr(0, key.size() - 1) : key;
        out += field.in == RocmSmiField::In::text && field.value.empty() ? fmt::format("GPU[{}]\t\t: {}\n", index, label)
                                   : fmt::format("GPU[{}]\t\t: {}: {}\n", index, label, field.value);
      }
    }
    out += banner("");
  };
  for (const Section& s : sections()) {
    if (wanted.count(s.flag) != 0) emit(s.title, s.fields);
  }
  if (!meminfo.empty()) emit("Memory Usage (Bytes)", [&meminfo](const Facts& f) { return meminfo_fields(f, meminfo); });
  out += banner("End of ROCm SMI Log");
  return out;
}

}  // namespace

int run_rocm_smi_compat(int argc, char** argv, int compat_flag, std::vector<std::string>& default_view_args) {
  RocmSmiRequest r;
  if (const auto code = parse_rocm_smi_args(argc, argv, compat_flag, r)) return *code;
  if (r.all) {
    for (const Section& s : sections()) r.wanted.insert(s.flag);
    r.meminfo = {"all"};
    r.driver = true;
  }
  if (r.wanted.empty() && r.meminfo.empty() && !r.driver) {
    if (r.json) return usage_error("--json needs a flag to show (try -a)");
    if (!r.open.sysfs_root.empty()) default_view_args.insert(default_view_args.end(), {"--sysfs-root", r.open.sysfs_root});
    if (!r.open.procfs_root.empty()) default_view_args.insert(default_view_args.end(), {"--procfs-root", r.open.procfs_root});
    for (const std::string& d : r.device_selectors) default_view_args.insert(default_view_args.end(), {"-g", d});
    return kRocmSmiDefaultView;
  }

  const smi::System system = smi::System::open(r.open);
  std::vector<std::uint32_t> devices;
  for (const std::string& selector : r.device_selectors) devices.push_back(system.resolve(selector));
  if (devices.empty()) {
    for (const auto& d : system.devices()) devices.push_back(d.index);
  }
  smi::SampleOptions what;
  what.identity = what.static_info = what.live = true;
  std::vector<Facts> facts;
  for (const std::uint32_t d : devices) facts.emplace_back(d, system.sample(d, what));
  const std::string driver_version = facts.empty() ? std::string("N/A") : facts.front().text("Driver version");
  const std::string out = r.json ? rocm_smi_json(facts, r, driver_version) : rocm_smi_text(facts, r, driver_version);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

}  // namespace hipstack::cli
