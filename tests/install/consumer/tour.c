/* A C99 program that reaches every part of the model through the installed C API: devices, their
 * partitions, processes, health findings and bad pages, the links between them, and events. One line
 * per fact, which test_install.sh compares with what the installed hipstack-smi says:
 *   device INDEX BDF partitions N processes N pids P,P,... health VERDICT findings N
 *   links N
 *   events N
 *   tour.c SYSFS_ROOT PROCFS_ROOT */
#include <hipstack/smi.h>
#include <stdio.h>
#include <string.h>

static int failed(const char* what) {
  fprintf(stderr, "tour: %s: %s\n", what, hipstack_smi_last_error());
  return 1;
}

static int device_line(hipstack_smi_system* system, const hipstack_smi_device_info* info) {
  hipstack_smi_list* partitions = NULL;
  hipstack_smi_list* processes = NULL;
  hipstack_smi_list* findings = NULL;
  hipstack_smi_list* pages = NULL;
  hipstack_smi_verdict overall = HIPSTACK_SMI_VERDICT_UNKNOWN;
  size_t i;
  if (hipstack_smi_get_partitions(system, info->index, &partitions) != HIPSTACK_SMI_OK) return failed("partitions");
  if (hipstack_smi_get_processes(system, info->index, 0, &processes) != HIPSTACK_SMI_OK) return failed("processes");
  if (hipstack_smi_check_health(system, info->index, NULL, &overall, &findings) != HIPSTACK_SMI_OK) return failed("health");
  if (hipstack_smi_get_bad_pages(system, info->index, &pages) != HIPSTACK_SMI_OK) return failed("bad pages");
  printf("device %u %s partitions %zu processes %zu pids ", info->index, info->bdf, hipstack_smi_list_size(partitions),
         hipstack_smi_list_size(processes));
  for (i = 0; i < hipstack_smi_list_size(processes); ++i) {
    hipstack_smi_process process = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_process);
    if (hipstack_smi_list_get_process(processes, i, &process) != HIPSTACK_SMI_OK) return failed("process");
    printf("%s%d", i > 0 ? "," : "", (int)process.pid);
  }
  printf(" health %s findings %zu\n", hipstack_smi_verdict_name(overall), hipstack_smi_list_size(findings));
  for (i = 0; i < hipstack_smi_list_size(findings); ++i) {
    hipstack_smi_health_finding finding = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_health_finding);
    if (hipstack_smi_list_get_finding(findings, i, &finding) != HIPSTACK_SMI_OK) return failed("finding");
    if (finding.check == HIPSTACK_SMI_CHECK_OTHER || strcmp(hipstack_smi_health_check_name(finding.check), finding.check_name) != 0) {
      fprintf(stderr, "tour: finding %s has no check constant\n", finding.check_name);
      return 1;
    }
  }
  hipstack_smi_list_free(partitions);
  hipstack_smi_list_free(processes);
  hipstack_smi_list_free(findings);
  hipstack_smi_list_free(pages);
  return 0;
}

int main(int argc, char** argv) {
  hipstack_smi_open_options options = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_open_options);
  hipstack_smi_system* system = NULL;
  hipstack_smi_list* devices = NULL;
  hipstack_smi_list* links = NULL;
  hipstack_smi_list* events = NULL;
  hipstack_smi_event_watch* watch = NULL;
  size_t i;
  if (argc != 3) {
    fprintf(stderr, "usage: tour SYSFS_ROOT PROCFS_ROOT\n");
    return 2;
  }
  options.sysfs_root = argv[1];
  options.procfs_root = argv[2];
  if (hipstack_smi_api_version() < HIPSTACK_SMI_API_VERSION) {
    fprintf(stderr, "tour: the library implements API %u, this program needs %u\n", hipstack_smi_api_version(),
            HIPSTACK_SMI_API_VERSION);
    return 1;
  }
  if (hipstack_smi_open(&options, &system) != HIPSTACK_SMI_OK) return failed("open");
  if (hipstack_smi_get_devices(system, &devices) != HIPSTACK_SMI_OK) return failed("devices");
  for (i = 0; i < hipstack_smi_list_size(devices); ++i) {
    hipstack_smi_device_info info = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_device_info);
    if (hipstack_smi_list_get_device(devices, i, &info) != HIPSTACK_SMI_OK) return failed("device");
    if (device_line(system, &info) != 0) return 1;
  }
  if (hipstack_smi_get_links(system, &links) != HIPSTACK_SMI_OK) return failed("links");
  printf("links %zu\n", hipstack_smi_list_size(links));
  if (hipstack_smi_event_watch_open(&options, NULL, 0, &watch) != HIPSTACK_SMI_OK) return failed("event watch");
  if (hipstack_smi_event_watch_poll(watch, &events) != HIPSTACK_SMI_OK) return failed("event poll");
  printf("events %zu\n", hipstack_smi_list_size(events));
  hipstack_smi_list_free(events);
  hipstack_smi_event_watch_close(watch);
  hipstack_smi_list_free(links);
  hipstack_smi_list_free(devices);
  hipstack_smi_close(system);
  return 0;
}
