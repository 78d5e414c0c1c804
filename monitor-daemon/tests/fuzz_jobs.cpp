// Fuzzes job accounting's inputs: a GPU's stored usage (JSON read back from the job store, which an
// operator may edit), the samples counted into it (any metric, instance, value and time, in any
// order), and job ids (from requests and the job-mapping folder). Nothing may crash; a stored usage
// that is accepted writes back the same; counted growth is never negative.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "job_input.hpp"
#include "job_usage.hpp"

namespace {

using namespace hipstack::smid;

void require(bool condition) {
  if (!condition) std::abort();
}

template <typename T>
T take(const std::uint8_t*& data, std::size_t& size) {
  T value{};
  const std::size_t n = size < sizeof value ? size : sizeof value;
  std::memcpy(&value, data, n);
  data += n;
  size -= n;
  return value;
}

void stored_usage(const std::uint8_t* data, std::size_t size) {
  const auto json = nlohmann::json::parse(data, data + size, nullptr, false);
  if (json.is_discarded()) return;
  try {
    const JobGpuUsage usage = usage_from_json(json);
    (void)usage.figures(1.0);
    const nlohmann::json again = to_json(usage);
    require(to_json(usage_from_json(again)) == again);
  } catch (const std::runtime_error&) {
    // refused with the field named: what the store reports as a problem
  }
}

void counted_samples(const std::uint8_t* data, std::size_t size) {
  static const auto& metrics = hipstack::smi::catalogue();
  JobGpuUsage usage;
  usage.vendor = (size > 0 && data[0] % 2 == 0) ? "nvidia" : "amd";
  usage.gfx_target = "gfx942";
  std::int64_t ms = 1767225600000;
  while (size > 0) {
    HistoryEntry entry;
    ms += take<std::int16_t>(data, size);  // time may go back: such a sample is not counted
    entry.at = std::chrono::system_clock::time_point(std::chrono::milliseconds(ms));
    auto instances = std::make_shared<std::vector<std::string>>(std::vector<std::string>{"", "a", "79"});
    entry.instances = instances;
    const unsigned count = take<std::uint8_t>(data, size) % 8;
    for (unsigned i = 0; i < count && size > 0; ++i) {
      HistoryValue v;
      v.id = metrics[take<std::uint16_t>(data, size) % metrics.size()].id;
      const std::uint8_t flags = take<std::uint8_t>(data, size);
      v.status = (flags & 1) != 0 ? hipstack::smi::Status::ok : hipstack::smi::Status::unavailable;
      v.integer = (flags & 2) != 0;
      v.instance = static_cast<std::uint16_t>((flags >> 2) % 4);  // 3: past the table
      v.raw = take<std::uint64_t>(data, size);
      entry.values.push_back(v);
    }
    usage.fold(entry, (ms % 7) + 0.5);
  }
  for (const auto& [key, counter] : usage.counters) require(!(counter.growth < 0));
  for (const JobFigure& f : usage.figures(10.0)) require(f.value.has_value() || !f.why.empty());  // unknown says why
  require(to_json(usage_from_json(to_json(usage))) == to_json(usage));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t mode = data[0] % 3;
  ++data;
  --size;
  if (mode == 0) stored_usage(data, size);
  if (mode == 1) counted_samples(data, size);
  if (mode == 2) {
    const std::string id(reinterpret_cast<const char*>(data), size);
    try {
      check_job_id(id);
      require(!id.empty() && id.size() <= kMaxJobIdBytes && id.find_first_of(" \n\"\\/") == std::string::npos);
    } catch (const JobRequestError&) {
    }
  }
  return 0;
}
