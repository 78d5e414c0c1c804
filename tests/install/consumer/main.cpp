// Prints "<bdf> <junction temperature>" for every GPU, through the C++ API.
#include <hipstack/smi.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  hipstack::smi::OpenOptions options;
  if (argc > 1) options.sysfs_root = argv[1];
  const auto system = hipstack::smi::System::open(options);
  for (const auto& device : system.devices()) {
    const auto reading = system.read(device.index, hipstack::smi::MetricId::temperature_junction);
    std::printf("%s %g\n", device.bdf.c_str(), reading.number().value_or(-1));
  }
  return system.devices().empty() ? 1 : 0;
}
