// partition_probe: the library's own view, for the emulator tests. Opens a System on SYSROOT,
// optionally switches every GPU to a compute partition mode through System::set_compute_partition,
// then prints, from that same System, one line per partition:
//   partition <device> <bdf> <id> <kfd gpu_id> <render minor> <xccs> <compute units> <memory bytes>
// Exit 0 when every switch was applied, 1 otherwise (the result lines say why).
#include <hipstack/smi.hpp>

#include <cstdio>
#include <string>

namespace {

std::string cell(const hipstack::smi::Partition& p, hipstack::smi::MetricId id) {
  for (const auto& r : p.readings) {
    if (r.id == id && r.ok()) return std::to_string(static_cast<long long>(*r.number()));
  }
  return "-";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hipstack::smi;
  if (argc != 2 && !(argc == 4 && std::string(argv[2]) == "--compute-mode")) {
    std::fprintf(stderr, "usage: partition_probe SYSROOT [--compute-mode MODE]\n");
    return 2;
  }
  try {
    OpenOptions options;
    options.sysfs_root = argv[1];
    options.enable_nvml = false;
    System system = System::open(options);
    int rc = 0;
    if (argc == 4) {
      for (const DeviceSummary& d : system.devices()) {
        const ControlResult r = system.set_compute_partition(d.index, argv[3]);
        std::printf("result %u %s %s\n", d.index, std::string(outcome_name(r.outcome)).c_str(), r.message.c_str());
        if (r.outcome != ControlOutcome::applied) rc = 1;
      }
    }
    for (const DeviceSummary& d : system.devices()) {
      for (const Partition& p : system.partitions(d.index)) {
        std::printf("partition %u %s %s %s %s %s %s %s\n", d.index, p.bdf.c_str(), p.id.c_str(),
                    cell(p, MetricId::partition_kfd_gpu_id).c_str(), cell(p, MetricId::partition_render_minor).c_str(),
                    cell(p, MetricId::partition_xccs).c_str(), cell(p, MetricId::partition_compute_units).c_str(),
                    cell(p, MetricId::partition_memory).c_str());
      }
    }
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "partition_probe: %s\n", e.what());
    return 1;
  }
}
