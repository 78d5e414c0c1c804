// libFuzzer target for the KFD properties parser (kfd_topology.hpp: the backend and hipstack-info): any bytes in, no crash, and every
// problem it reports names the file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <hipstack/smi.hpp>

#include "kfd_topology.hpp"

using namespace hipstack::smi::detail::kfd;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> problems;
  const Properties p = parse_properties(text, "fuzz/properties", problems);
  for (const std::string& problem : problems) {
    if (problem.rfind("fuzz/properties: line ", 0) != 0) std::abort();
  }
  if (p.values.size() > size) std::abort();  // every value needs at least a byte of its own
  (void)bdf_from_location(p.get("domain"), p.get("location_id"));
  (void)hipstack::smi::normalise_bdf(text);
  return 0;
}
