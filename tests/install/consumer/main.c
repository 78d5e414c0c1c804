/* Prints "<bdf> <junction temperature>" for every GPU, through the C API (a C99 program). */
#include <hipstack/smi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  hipstack_smi_open_options options = {argc > 1 ? argv[1] : NULL, NULL};
  hipstack_smi_system* system = NULL;
  if (hipstack_smi_open(&options, &system) != HIPSTACK_SMI_OK) {
    fprintf(stderr, "%s\n", hipstack_smi_last_error());
    return 1;
  }
  uint32_t count = 0;
  hipstack_smi_device_count(system, &count);
  for (uint32_t i = 0; i < count; ++i) {
    hipstack_smi_device_info info;
    hipstack_smi_sample* sample = NULL;
    hipstack_smi_device_get_info(system, i, &info);
    hipstack_smi_sample_device(system, i, HIPSTACK_SMI_SAMPLE_LIVE, &sample);
    for (size_t r = 0; r < hipstack_smi_sample_size(sample); ++r) {
      const hipstack_smi_reading* reading = hipstack_smi_sample_reading(sample, r);
      if (reading->metric_id == HIPSTACK_SMI_METRIC_temperature_junction) {
        printf("%s %g\n", info.bdf, reading->status == HIPSTACK_SMI_STATUS_OK ? reading->real : -1.0);
      }
    }
    hipstack_smi_sample_free(sample);
  }
  hipstack_smi_close(system);
  return count == 0;
}
