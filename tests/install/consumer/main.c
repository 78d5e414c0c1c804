/* Prints "<bdf> <junction temperature>" for every GPU, through the C API (a C99 program). */
#include <hipstack/smi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  hipstack_smi_open_options options = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_open_options);
  options.sysfs_root = argc > 1 ? argv[1] : NULL;
  hipstack_smi_system* system = NULL;
  if (hipstack_smi_open(&options, &system) != HIPSTACK_SMI_OK) {
    fprintf(stderr, "%s\n", hipstack_smi_last_error());
    return 1;
  }
  hipstack_smi_list* devices = NULL;
  if (hipstack_smi_get_devices(system, &devices) != HIPSTACK_SMI_OK) {
    fprintf(stderr, "%s\n", hipstack_smi_last_error());
    hipstack_smi_close(system);
    return 1;
  }
  size_t count = hipstack_smi_list_size(devices);
  for (size_t i = 0; i < count; ++i) {
    hipstack_smi_device_info info = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_device_info);
    hipstack_smi_reading junction = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_reading);
    hipstack_smi_list* sample = NULL;
    hipstack_smi_list_get_device(devices, i, &info);
    if (hipstack_smi_sample_device(system, info.index, NULL, &sample) == HIPSTACK_SMI_OK &&
        hipstack_smi_list_find_reading(sample, HIPSTACK_SMI_METRIC_temperature_junction, NULL, &junction) == HIPSTACK_SMI_OK) {
      printf("%s %g\n", info.bdf, junction.status == HIPSTACK_SMI_STATUS_OK ? junction.real : -1.0);
    }
    hipstack_smi_list_free(sample);
  }
  hipstack_smi_list_free(devices);
  hipstack_smi_close(system);
  return count == 0;
}
