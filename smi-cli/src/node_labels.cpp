// hipstack-smi static --nfd: the node's GPUs as Node Feature Discovery labels (a local feature file,
// docs/health.md "Acting on health"). A label says what every selected GPU has: a fact the GPUs do
// not share (two models in one node) or that could not be read on one of them is left out, never
// guessed; the count is always there.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include <hipstack/foreign_names.hpp>

#include "commands.hpp"

namespace hipstack::cli {
namespace {


// NFD accepts names under *.feature.node.kubernetes.io without extra configuration.
constexpr const char* kPrefix = "hipstack.feature.node.kubernetes.io/";
constexpr std::size_t kMaxValue = 63;  // a Kubernetes label value

// A label value: letters, digits, '.', '_' and '-' (a run of other characters becomes one '-'),
// starting and ending with a letter or digit, at most 63 characters; nothing when nothing is left.
std::optional<std::string> label_value(std::string_view text) {
  std::string out;
  bool replaced = false;
  for (const char c : text) {
    const bool kept = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
    if (kept) out += c;
    else if (!replaced) out += '-';
    replaced = !kept;
  }
  if (out.size() > kMaxValue) out.resize(kMaxValue);
  while (!out.empty() && std::isalnum(static_cast<unsigned char>(out.back())) == 0) out.pop_back();
  const auto first = std::find_if(out.begin(), out.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
  out.erase(out.begin(), first);
  if (out.empty()) return std::nullopt;
  return out;
}

// A label's value from its reading: the text or number as printed, a byte count as whole GiB
// (smi-lib/src/foreign/nfd.cpp).
std::optional<std::string> label_of(const smi::Reading& r) {
  if (smi::find_metric(r.id)->unit == smi::Unit::byte) {
    const auto bytes = r.number();
    if (!bytes || *bytes <= 0) return std::nullopt;
    return std::to_string(static_cast<long long>(*bytes / (1024.0 * 1024.0 * 1024.0)));
  }
  if (const auto text = r.text()) return label_value(*text);
  if (const auto number = r.number()) return label_value(fmt::format("{}", *number));
  return std::nullopt;
}

}  // namespace

int run_node_labels(const DeviceSource& system, const CommonOptions& options) {
  const auto selected = selected_devices(system, options);
  const auto table = smi::foreign_names(smi::ForeignTool::nfd);
  smi::SampleOptions what;
  what.identity = true;
  what.static_info = true;
  what.live = false;
  for (const smi::ForeignName& label : table) what.metrics.push_back(*label.from.begin());
  const auto sampled = system.sample_all(selected, what);
  // Per label: the one value every GPU has, or nothing.
  std::map<std::string_view, std::optional<std::string>> agreed;
  for (std::size_t i = 0; i < sampled.size(); ++i) {
    for (const smi::ForeignName& label : table) {
      std::optional<std::string> value;
      for (const smi::Reading& r : sampled[i]) {
        if (r.id == *label.from.begin() && r.instance.empty() && r.ok()) value = label_of(r);
      }
      const auto [it, first] = agreed.emplace(label.name, value);
      if (!first && it->second != value) it->second = std::nullopt;
    }
  }
  std::vector<std::pair<std::string, std::string>> labels{{"gpu.count", std::to_string(selected.size())}};
  for (const smi::ForeignName& label : table) {
    if (const auto it = agreed.find(label.name); it != agreed.end() && it->second) labels.emplace_back(label.name, *it->second);
  }
  if (options.format == Format::json) {
    Json doc = document("static");
    doc["labels"] = Json::object();
    for (const auto& [name, value] : labels) doc["labels"][kPrefix + name] = value;
    print_json(doc);
  } else {
    std::string text;
    for (const auto& [name, value] : labels) text += fmt::format("{}{}={}\n", kPrefix, name, value);
    print(text);
  }
  return finish_with_faults(system, selected);
}

}  // namespace hipstack::cli
