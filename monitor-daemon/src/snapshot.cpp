// The snapshot types' code: the empty slow sample and a live sample as the history ring keeps it
// (snapshot.hpp).
#include "snapshot.hpp"

#include <algorithm>
#include <variant>

namespace hipstack::smid {

const std::shared_ptr<const SlowSample>& SlowSample::none() {
  static const std::shared_ptr<const SlowSample> empty = std::make_shared<const SlowSample>();
  return empty;
}

HistoryEntry HistoryEntry::from(std::chrono::system_clock::time_point at, const std::vector<smi::Reading>& live,
                                const HistoryEntry* previous) {
  HistoryEntry entry;
  entry.at = at;
  std::vector<std::string> labels;
  // Counted first, so that the ring's biggest block is allocated once at its final size (it lives for
  // the whole history; a reserve-then-shrink pair doubled the allocations per sample).
  const auto kept = [](const smi::Reading& r) {
    return std::holds_alternative<std::int64_t>(r.value) || std::holds_alternative<double>(r.value) || r.status != smi::Status::ok;
  };
  entry.values.reserve(static_cast<std::size_t>(std::count_if(live.begin(), live.end(), kept)));
  for (const smi::Reading& r : live) {
    HistoryValue v;
    v.id = r.id;
    v.status = r.status;
    v.error_code = r.error_code;
    if (const auto* i = std::get_if<std::int64_t>(&r.value)) {
      v.integer = true;
      v.raw = static_cast<std::uint64_t>(*i);
    } else if (const auto* d = std::get_if<double>(&r.value)) {
      v.raw = std::bit_cast<std::uint64_t>(*d);
    } else if (r.status == smi::Status::ok) {
      continue;  // a text value: not kept (see HistoryValue)
    }
    auto found = std::find(labels.begin(), labels.end(), r.instance);
    if (found == labels.end()) found = labels.insert(labels.end(), r.instance);
    v.instance = static_cast<std::uint16_t>(found - labels.begin());
    entry.values.push_back(v);
  }
  if (previous != nullptr && previous->instances && *previous->instances == labels) {
    entry.instances = previous->instances;
  } else {
    entry.instances = std::make_shared<const std::vector<std::string>>(std::move(labels));
  }
  return entry;
}

}  // namespace hipstack::smid
