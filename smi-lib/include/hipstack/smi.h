/* hipstack/smi.h: the C API of libhipstack-smi (docs/api.md).
 *
 * Built to grow without breaking a program compiled against an older header:
 * - Every struct that may gain fields begins with `uint32_t struct_size`: set it to sizeof the struct
 *   (HIPSTACK_SMI_STRUCT_INIT does, and zeroes the rest). The library reads and writes only the
 *   fields that fit in struct_size, so an older program gets the fields it knows and a newer one
 *   learns from hipstack_smi_api_version() which fields an older library filled. A struct_size
 *   smaller than the first version of the struct is refused (HIPSTACK_SMI_ERROR_INVALID_ARGUMENT).
 * - Enums have explicit values that never change; new values are added at the end. A program must
 *   allow for values it does not know.
 * - Lists (devices, readings, partitions, processes, links, bad pages, health findings, events,
 *   control writes) are opaque hipstack_smi_list objects: the strings of the structs read from a
 *   list stay valid until that list is freed. A list nested in another (a partition's readings)
 *   belongs to it: freeing it does nothing.
 * - A single string with no list to hold it (a device's fault) is copied into the caller's buffer:
 *   *size is its capacity on entry and the size needed (with the NUL) on return; a buffer too small
 *   is left untouched and the call says HIPSTACK_SMI_ERROR_INSUFFICIENT_SIZE. Nothing is truncated.
 * - Nothing is thrown across this boundary. hipstack_smi_last_error() gives the calling thread's
 *   message for its last failed call.
 *
 * Threads: a hipstack_smi_system may be used from several threads at once; a control call holds it
 * exclusively (readers wait). A list or an event watch is used by one thread at a time. The thread
 * safety of every call is in docs/api.md. */
#ifndef HIPSTACK_SMI_H
#define HIPSTACK_SMI_H

#include <hipstack/smi_catalogue.h>
#include <hipstack/smi_checks.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HIPSTACK_SMI_API __attribute__((visibility("default")))
#else
#define HIPSTACK_SMI_API
#endif

/* The version of this header's API: 1. A library answers the version it implements. */
#define HIPSTACK_SMI_API_VERSION 3u /* 2: hipstack_smi_read_values; 3: hipstack_smi_foreign_name_* */
/* `hipstack_smi_device_info info = HIPSTACK_SMI_STRUCT_INIT(hipstack_smi_device_info);`: struct_size
 * set, every other field zero (C99 and C++11 alike, without -Wmissing-field-initializers warnings). */
#ifdef __cplusplus
#define HIPSTACK_SMI_STRUCT_INIT(type) \
  ([] { type hipstack_smi_struct_{}; hipstack_smi_struct_.struct_size = (uint32_t)sizeof(type); return hipstack_smi_struct_; }())
#else
#define HIPSTACK_SMI_STRUCT_INIT(type) {.struct_size = (uint32_t)sizeof(type)}
#endif

typedef enum hipstack_smi_result {
  HIPSTACK_SMI_OK = 0,
  HIPSTACK_SMI_ERROR_INVALID_ARGUMENT = 1,
  HIPSTACK_SMI_ERROR_NO_SUCH_DEVICE = 2,
  HIPSTACK_SMI_ERROR_READ_FAILURE = 3,
  HIPSTACK_SMI_ERROR_NO_MEMORY = 4,
  HIPSTACK_SMI_ERROR_INTERNAL = 5,
  HIPSTACK_SMI_ERROR_INSUFFICIENT_SIZE = 6, /* *size says how much is needed */
  HIPSTACK_SMI_ERROR_NOT_FOUND = 7,         /* no such metric, list item or reading */
  HIPSTACK_SMI_ERROR_TIMED_OUT = 8          /* a read ran past the read deadline (open options) */
} hipstack_smi_result;

typedef enum hipstack_smi_status {
  HIPSTACK_SMI_STATUS_OK = 0,
  HIPSTACK_SMI_STATUS_NOT_SUPPORTED = 1,
  HIPSTACK_SMI_STATUS_UNAVAILABLE = 2,
  HIPSTACK_SMI_STATUS_ERROR = 3
} hipstack_smi_status;

typedef enum hipstack_smi_value_type {
  HIPSTACK_SMI_TYPE_INTEGER = 0,
  HIPSTACK_SMI_TYPE_REAL = 1,
  HIPSTACK_SMI_TYPE_TEXT = 2
} hipstack_smi_value_type;

typedef enum hipstack_smi_scope {
  HIPSTACK_SMI_SCOPE_DEVICE = 0,
  HIPSTACK_SMI_SCOPE_PARTITION = 1,
  HIPSTACK_SMI_SCOPE_PROCESS = 2,
  HIPSTACK_SMI_SCOPE_LINK = 3
} hipstack_smi_scope;

typedef enum hipstack_smi_kind {
  HIPSTACK_SMI_KIND_IDENTITY = 0,
  HIPSTACK_SMI_KIND_STATIC = 1,
  HIPSTACK_SMI_KIND_LIVE = 2,
  HIPSTACK_SMI_KIND_COUNTER = 3, /* live, and only grows while the driver is loaded */
  HIPSTACK_SMI_KIND_WINDOW = 4   /* an average over the window between two looks (HIPSTACK_SMI_SAMPLE_WINDOW) */
} hipstack_smi_kind;

/* What reading a metric costs (docs/performance.md, "Cost classes"). */
typedef enum hipstack_smi_cost {
  HIPSTACK_SMI_COST_CHEAP = 0,
  HIPSTACK_SMI_COST_COSTLY = 1,
  HIPSTACK_SMI_COST_WINDOW = 2,
  HIPSTACK_SMI_COST_BLOCKING = 3
} hipstack_smi_cost;

/* One constant per catalogue row: HIPSTACK_SMI_METRIC_<name>. */
typedef enum hipstack_smi_metric_id {
#define HIPSTACK_SMI_C_X(id, name, unit, type, scope, kind, instance, cost, groups, limit, series, states, help) HIPSTACK_SMI_METRIC_##name = id,
  HIPSTACK_SMI_CATALOGUE(HIPSTACK_SMI_C_X)
#undef HIPSTACK_SMI_C_X
} hipstack_smi_metric_id;

/* One constant per health check: HIPSTACK_SMI_CHECK_<identifier>; 0 is a check this library does
 * not know by name (check_name then says which). */
typedef enum hipstack_smi_health_check {
  HIPSTACK_SMI_CHECK_OTHER = 0,
#define HIPSTACK_SMI_C_X(id, identifier, name) HIPSTACK_SMI_CHECK_##identifier = id,
  HIPSTACK_SMI_HEALTH_CHECKS(HIPSTACK_SMI_C_X)
#undef HIPSTACK_SMI_C_X
} hipstack_smi_health_check;

typedef enum hipstack_smi_verdict {
  HIPSTACK_SMI_VERDICT_PASS = 0,
  HIPSTACK_SMI_VERDICT_WARN = 1,
  HIPSTACK_SMI_VERDICT_FAIL = 2,
  HIPSTACK_SMI_VERDICT_UNKNOWN = 3 /* the check could not be evaluated: never a pass */
} hipstack_smi_verdict;

/* ---- The library and its catalogue (any thread, any time) ---------------------------------------- */

HIPSTACK_SMI_API const char* hipstack_smi_version(void);     /* "0.1.0" */
HIPSTACK_SMI_API uint32_t hipstack_smi_api_version(void);    /* HIPSTACK_SMI_API_VERSION of the library */
HIPSTACK_SMI_API const char* hipstack_smi_result_string(hipstack_smi_result result);
/* The calling thread's message for its last failed call ("" after a call that succeeded); valid until
 * this thread's next call. */
HIPSTACK_SMI_API const char* hipstack_smi_last_error(void);

typedef struct hipstack_smi_metric_info {
  uint32_t struct_size;
  uint32_t id;
  const char* name;
  const char* unit;           /* unit name: "celsius", "watt", ... */
  const char* unit_symbol;    /* "C", "W", ... ("" for none) */
  hipstack_smi_value_type type;
  hipstack_smi_scope scope;
  hipstack_smi_kind kind;
  hipstack_smi_cost cost;
  const char* instance_label; /* "" for single-valued metrics */
  const char* help;
} hipstack_smi_metric_info;  /* strings live as long as the library is loaded */

HIPSTACK_SMI_API size_t hipstack_smi_catalogue_size(void);
/* NOT_FOUND past the end, or for an id or name the catalogue lacks. */
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_catalogue_get(size_t position, hipstack_smi_metric_info* info);
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_metric_by_id(uint32_t id, hipstack_smi_metric_info* info);
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_metric_by_name(const char* name, hipstack_smi_metric_info* info);
/* "thermal.temperature"; "" for HIPSTACK_SMI_CHECK_OTHER and unknown values. */
HIPSTACK_SMI_API const char* hipstack_smi_health_check_name(hipstack_smi_health_check check);
HIPSTACK_SMI_API const char* hipstack_smi_verdict_name(hipstack_smi_verdict verdict); /* "PASS", ... */

/* ---- Foreign names (any thread, any time) --------------------------------------------------------
 * The names other tools give the catalogue's metrics (docs/api.md, "Foreign names"): nvidia-smi's
 * --query-gpu fields, pynvml's calls and struct fields, amdsmi's calls and dict keys, each with the
 * metrics hipstack answers it from. hipstack.pynvml and hipstack.amdsmi read their metric names here. */

typedef enum hipstack_smi_foreign_tool {
  HIPSTACK_SMI_FOREIGN_NVIDIA_SMI = 0, /* "power.draw" */
  HIPSTACK_SMI_FOREIGN_PYNVML = 1,     /* "nvmlDeviceGetPowerUsage", "nvmlDeviceGetMemoryInfo.total" */
  HIPSTACK_SMI_FOREIGN_AMDSMI = 2,     /* "amdsmi_get_power_info.socket_power" */
  HIPSTACK_SMI_FOREIGN_NFD = 3,        /* "gpu.vram-gib": a Node Feature Discovery label (hipstack-smi static --nfd) */
  HIPSTACK_SMI_FOREIGN_ROCM_SMI = 4,   /* "Temperature (Sensor edge) (C)": a key rocm-smi prints (hipstack-smi --rocm-smi) */
  HIPSTACK_SMI_FOREIGN_JOBS = 5,       /* "power_mean": a figure of hipstack-smid's job summary (docs/jobs.md) */
  /* Not a tool: makes every int a value of the type, so that a tool this library does not know (a
   * newer caller's) is an error it reports (HIPSTACK_SMI_ERROR_INVALID_ARGUMENT), never undefined. */
  HIPSTACK_SMI_FOREIGN_TOOL_MAX_ENUM = 0x7fffffff
} hipstack_smi_foreign_tool;

typedef struct hipstack_smi_foreign_name {
  uint32_t struct_size;
  hipstack_smi_foreign_tool tool;
  const char* name;
  const char* metrics;          /* catalogue names in candidate order, comma-separated ("power_average,power_current");
                                 * "" where hipstack has no figure (an nvidia-smi field it prints as not available) */
  const uint32_t* metric_ids;   /* the same metrics' ids */
  size_t metric_count;
  const char* instance;         /* the metric's instance the name reads ("correctable"), "" for none */
  const char* note;             /* the conversion ("W -> mW") and how the metrics combine */
} hipstack_smi_foreign_name;  /* strings and ids live as long as the library is loaded */

/* How many names a tool has (0 for a tool this library does not know). */
HIPSTACK_SMI_API size_t hipstack_smi_foreign_names_size(hipstack_smi_foreign_tool tool);
/* NOT_FOUND past the end or for a name the tool's table lacks; INVALID_ARGUMENT for an unknown tool. */
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_foreign_name_get(hipstack_smi_foreign_tool tool, size_t position,
                                                                    hipstack_smi_foreign_name* out);
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_foreign_name_find(hipstack_smi_foreign_tool tool, const char* name,
                                                                     hipstack_smi_foreign_name* out);

/* ---- Opening a system --------------------------------------------------------------------------- */

enum {
  HIPSTACK_SMI_OPEN_NO_AMDGPU = 1, /* leave the amdgpu backend out */
  HIPSTACK_SMI_OPEN_NO_NVML = 2,   /* leave the NVML backend out */
  /* leave NVML initialised at close, for a process that exits right after (nvmlShutdown costs ms) */
  HIPSTACK_SMI_OPEN_KEEP_VENDOR_INIT = 4
};

/* One record per write attempt of a control call (and one per refusal); strings valid during the call. */
typedef struct hipstack_smi_audit_record {
  uint32_t struct_size;
  uint32_t uid;    /* effective uid of the caller */
  int32_t pid;
  uint32_t device; /* index */
  const char* bdf;
  const char* action;
  const char* path;   /* host path written; "" for a refusal before any write */
  const char* value;
  const char* result; /* "ok", "refused: <reason>", "error: <errno text>" */
} hipstack_smi_audit_record;
/* Called while the control call holds the system: it must not call back into that system. */
typedef void (*hipstack_smi_audit_fn)(const hipstack_smi_audit_record* record, void* user_data);

typedef struct hipstack_smi_open_options {
  uint32_t struct_size;
  uint32_t flags;           /* HIPSTACK_SMI_OPEN_* */
  const char* sysfs_root;   /* NULL or "": live /sys (or $HIPSTACK_SYSFS_ROOT) */
  const char* procfs_root;  /* NULL or "": live /proc (or $HIPSTACK_PROCFS_ROOT) */
  const char* devfs_root;   /* NULL or "": live /dev (or derived from sysfs_root) */
  const char* nvml_library; /* NULL or "": $HIPSTACK_NVML_LIBRARY, else libnvidia-ml.so.1 */
  hipstack_smi_audit_fn audit; /* NULL: no audit */
  void* audit_user_data;
  /* How long a call that reads the GPUs may take (plus any wait it asks for: a window, an interval)
   * before it answers HIPSTACK_SMI_ERROR_TIMED_OUT; the read goes on in the background and later
   * calls about that GPU answer TIMED_OUT at once until it returns. 0 (or a struct without this
   * field): HIPSTACK_SMI_DEFAULT_READ_DEADLINE_MS; HIPSTACK_SMI_NO_READ_DEADLINE: calls wait as long
   * as the kernel takes. Control calls are not bounded (docs/api.md, "Read deadline"). */
  uint32_t read_deadline_ms;
} hipstack_smi_open_options;

#define HIPSTACK_SMI_DEFAULT_READ_DEADLINE_MS 10000u
#define HIPSTACK_SMI_NO_READ_DEADLINE 0xffffffffu

typedef struct hipstack_smi_system hipstack_smi_system;
typedef struct hipstack_smi_list hipstack_smi_list;

/* options NULL: every default. */
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_open(const hipstack_smi_open_options* options,
                                                       hipstack_smi_system** system);
HIPSTACK_SMI_API void hipstack_smi_close(hipstack_smi_system* system); /* NULL is allowed */

/* ---- Lists ---------------------------------------------------------------------------------------- */

typedef enum hipstack_smi_list_kind {
  HIPSTACK_SMI_LIST_DEVICES = 0,
  HIPSTACK_SMI_LIST_BACKENDS = 1,
  HIPSTACK_SMI_LIST_READINGS = 2,
  HIPSTACK_SMI_LIST_PARTITIONS = 3,
  HIPSTACK_SMI_LIST_PROCESSES = 4,
  HIPSTACK_SMI_LIST_LINKS = 5,
  HIPSTACK_SMI_LIST_BAD_PAGES = 6,
  HIPSTACK_SMI_LIST_HEALTH_FINDINGS = 7,
  HIPSTACK_SMI_LIST_EVENTS = 8,
  HIPSTACK_SMI_LIST_CONTROL_WRITES = 9
} hipstack_smi_list_kind;

HIPSTACK_SMI_API hipstack_smi_list_kind hipstack_smi_list_get_kind(const hipstack_smi_list* list);
HIPSTACK_SMI_API size_t hipstack_smi_list_size(const hipstack_smi_list* list); /* 0 for NULL */
HIPSTACK_SMI_API void hipstack_smi_list_free(hipstack_smi_list* list);          /* NULL and nested lists: nothing */

/* Each getter copies item `position` of a list of its kind: INVALID_ARGUMENT for a list of another
 * kind, NOT_FOUND past the end. */

typedef struct hipstack_smi_device_info {
  uint32_t struct_size;
  uint32_t index;           /* stable for one system */
  const char* vendor;       /* "amd", "nvidia" */
  const char* backend;      /* "amdgpu", "nvml" */
  const char* bdf;          /* "0000:c1:00.0" */
  const char* uuid;
  const char* name;         /* marketing name */
  uint32_t partition_count;
  const char* fault;        /* why the GPU cannot be read now; "" when it can */
} hipstack_smi_device_info;
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_list_get_device(const hipstack_smi_list* list, size_t position,
                                                                  hipstack_smi_device_info* out);

typedef struct hipstack_smi_backend_info {
  uint32_t struct_size;
  const char* name;   /* "amdgpu", "nvml" */
  uint32_t present;   /* 1 when the backend found its driver */
  const char* reason; /* why it is absent, or what it found */
} hipstack_smi_backend_info;
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_list_get_backend(const hipstack_smi_list* list, size_t position,
                                                                   hipstack_smi_backend_info* out);

typedef struct hipstack_smi_reading {
  uint32_t struct_size;
  uint32_t metric_id;
  hipstack_smi_status status;
  hipstack_smi_value_type type; /* the metric's type */
  int32_t error_code;           /* errno for UNAVAILABLE / ERROR */
  int64_t integer;              /* when type is INTEGER and status OK */
  double real;                  /* when type is REAL (also set for INTEGER) and status OK */
  const char* text;             /* when type is TEXT and status OK, else "" */
  const char* instance;         /* "" for single-valued metrics */
  const char* detail;           /* the source, or what failed and where */
} hipstack_smi_reading;
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_list_get_reading(const hipstack_smi_list* list, size_t position,
                                                                   hipstack_smi_reading* out);
/* The reading of one metric (and instance: NULL or "" for single-valued metrics); NOT_FOUND when the
 * list has none. */
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_list_find_reading(const hipstack_smi_list* list, uint32_t metric_id,
                                                                    const char* instance, hipstack_smi_reading* out);

typedef struct hipstack_smi_partition {
  uint32_t struct_size;
  uint32_t index;                    /* within its GPU */
  const char* id;                    /* "<gpu uuid>/<index>" */
  const char* bdf;                   /* the partition's PCI function as the driver reports it */
  const hipstack_smi_list* readings; /* PARTITION-scope readings (nested: belongs to the list) */
} hipstack_smi_partition;
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_list_get_partition(const hipstack_smi_list* list, size_t position,
                                                                     hipstack_smi_partition* out);

typedef struct hipstack_smi_process {
  uint32_t struct_size;
  int32_t pid;
  const char* name;         /* /proc/<pid>/comm */
  const char* user;
  const char* command_line; /* arguments joined by spaces (at most 4 KiB read) */
  const char* cgroup;       /* the deepest cgroup path; "" when unreadable */
  const hipstack_smi_list* readings; /* PROCESS-scope readings for this device (nested) */
} hipstack_smi_process;
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_list_get_process(const hipstack_smi_list* list, size_t position,
                                                                   hipstack_smi_process* out);

typedef struct hipstack_smi_link {
  uint32_t struct_size;
  uint32_t from; /* device indices */
  uint32_t to;
  const hipstack_smi_list* readings; /* LINK-scope readings (nested) */
} hipstack_smi_link;
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_list_get_link(const hipstack_smi_list* list, size_t position,
                                                                hipstack_smi_link* out);

typedef struct hipstack_smi_bad_page {
  uint32_t struct_size;
  uint64_t frame;    /* page frame number (amdgpu) or physical address (NVML) */
  uint64_t size;     /* bytes; 0 when the driver does not say */
  const char* state; /* reserved, pending, failed (amdgpu); retired_sbe, retired_dbe (NVML) */
} hipstack_smi_bad_page;
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_list_get_bad_page(const hipstack_smi_list* list, size_t position,
                                                                    hipstack_smi_bad_page* out);

typedef struct hipstack_smi_health_finding {
  uint32_t struct_size;
  hipstack_smi_health_check check;
  const char* check_name;  /* "memory.uncorrectable_ecc" */
  hipstack_smi_verdict verdict;
  const char* reading;     /* what was measured, with units */
  const char* threshold;   /* what it was compared with */
  const char* message;     /* what it means */
  const char* remediation; /* what to do ("" when nothing) */
} hipstack_smi_health_finding;
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_list_get_finding(const hipstack_smi_list* list, size_t position,
                                                                   hipstack_smi_health_finding* out);

typedef struct hipstack_smi_event {
  uint32_t struct_size;
  const char* kind;    /* docs/events.md: "ecc-uncorrected", "device-removed", ... */
  uint32_t device;     /* index, as the later look saw the GPU (the earlier one for "device-removed") */
  const char* bdf;
  const char* uuid;
  const char* metric;  /* "name" or "name[instance]"; "" for events about the whole GPU */
  const char* before;  /* the value at the earlier look ("" when none) */
  const char* after;   /* the value at the later look */
  const char* message; /* what it means, in words */
} hipstack_smi_event;
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_list_get_event(const hipstack_smi_list* list, size_t position,
                                                                 hipstack_smi_event* out);

typedef struct hipstack_smi_control_write {
  uint32_t struct_size;
  const char* path;      /* system path ("/sys/class/drm/card0/device/current_compute_partition") */
  const char* value;     /* what is (or would be) written */
  const char* host_path; /* where that file really is (differs under a sysfs root) */
  uint32_t done;         /* 1: written successfully */
  int32_t error_code;    /* errno of a failed write */
} hipstack_smi_control_write;
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_list_get_control_write(const hipstack_smi_list* list, size_t position,
                                                                         hipstack_smi_control_write* out);

/* ---- Devices and what they report (any thread) ------------------------------------------------------ */

HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_get_devices(const hipstack_smi_system* system, hipstack_smi_list** devices);
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_get_backends(const hipstack_smi_system* system, hipstack_smi_list** backends);
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_device_count(const hipstack_smi_system* system, uint32_t* count);
/* selector: index, BDF (with or without domain) or UUID. */
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_device_resolve(const hipstack_smi_system* system,
                                                                 const char* selector, uint32_t* device);
/* Why the device cannot be read now ("" when it can), checked again now: a caller-sized buffer. */
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_device_get_fault(const hipstack_smi_system* system, uint32_t device,
                                                                   char* buffer, size_t* size);

/* What to sample: an OR of these. */
enum {
  HIPSTACK_SMI_SAMPLE_IDENTITY = 1,
  HIPSTACK_SMI_SAMPLE_STATIC = 2,
  HIPSTACK_SMI_SAMPLE_LIVE = 4,
  HIPSTACK_SMI_SAMPLE_PCIE_THROUGHPUT = 8, /* amdgpu: the pcie_bw read blocks one second */
  /* WINDOW-kind metrics: averages since this system's previous window look at the device (the first
     look of a system reports them unavailable, unless window_ms > 0) */
  HIPSTACK_SMI_SAMPLE_WINDOW = 16
};

typedef struct hipstack_smi_sample_options {
  uint32_t struct_size;
  uint32_t what;            /* HIPSTACK_SMI_SAMPLE_*; 0 means LIVE */
  uint32_t window_ms;       /* first window look: take one, wait this long, take the second */
  const uint32_t* metrics;  /* only these metric ids (NULL or metric_count 0: all of the kinds asked) */
  size_t metric_count;
} hipstack_smi_sample_options;

/* DEVICE-scope readings; options NULL: the live ones. */
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_sample_device(const hipstack_smi_system* system, uint32_t device,
                                                                const hipstack_smi_sample_options* options,
                                                                hipstack_smi_list** readings);
/* One metric's value as hipstack_smi_read_values gives it. Unlike the size-prefixed structs this one
 * never grows (an array's stride is the caller's sizeof): a new kind of value gets a new call. */
typedef struct hipstack_smi_value {
  hipstack_smi_status status;   /* OK, or why there is no value (the reading of hipstack_smi_sample_device says more) */
  hipstack_smi_value_type type; /* the metric's type: INTEGER or REAL */
  int64_t integer;              /* when type is INTEGER and status OK */
  double real;                  /* when status OK (INTEGER too, as a double) */
} hipstack_smi_value;

/* A poller's numbers (docs/api.md, "Values"): the current value of each of `count` single-valued
 * DEVICE-scope metrics of INTEGER or REAL type, values[i] that of metrics[i]; only those metrics are
 * read, nothing is allocated for the caller and nothing is to free. A metric of another scope or type,
 * with instances, or of cost WINDOW or BLOCKING is INVALID_ARGUMENT (sample_device reads those). */
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_read_values(const hipstack_smi_system* system, uint32_t device,
                                                              const uint32_t* metrics, size_t count,
                                                              hipstack_smi_value* values);
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_get_partitions(const hipstack_smi_system* system, uint32_t device,
                                                                 hipstack_smi_list** partitions);
/* interval_ms > 0: two looks that far apart, so the busy percentages of a first call are measured. */
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_get_processes(const hipstack_smi_system* system, uint32_t device,
                                                                uint32_t interval_ms, hipstack_smi_list** processes);
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_get_links(const hipstack_smi_system* system, hipstack_smi_list** links);
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_get_bad_pages(const hipstack_smi_system* system, uint32_t device,
                                                                hipstack_smi_list** bad_pages);

/* ---- Health (docs/health.md) ---------------------------------------------------------------------- */

typedef struct hipstack_smi_health_policy {
  uint32_t struct_size;
  double thermal_margin;        /* degrees C below a critical limit that warns */
  double throttle_share;        /* share of time throttled that warns */
  double power_cap_share;       /* power / cap that counts as "at the cap" */
  double busy_for_clock_check;  /* % busy above which a low clock is suspicious */
  double clock_low_share;       /* clock / max clock below which it is "stuck low" */
  int64_t correctable_ecc;      /* correctable errors since driver load that warn */
  int64_t pcie_replays;         /* replays since driver load that warn */
  double bad_page_share;        /* retired pages / threshold that warns */
} hipstack_smi_health_policy;

/* Fills the defaults (data-centre GPUs). */
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_health_policy_init(hipstack_smi_health_policy* policy);
/* Reads "key = value" lines over the defaults; INVALID_ARGUMENT naming file:line. */
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_health_policy_load(const char* path, hipstack_smi_health_policy* policy);
/* policy NULL: the defaults. overall: the worst evaluated verdict; UNKNOWN when nothing could be. */
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_check_health(const hipstack_smi_system* system, uint32_t device,
                                                               const hipstack_smi_health_policy* policy,
                                                               hipstack_smi_verdict* overall, hipstack_smi_list** findings);

/* ---- Events (docs/events.md) ---------------------------------------------------------------------- */

/* A watch subscribes to the events drivers report only to a live subscriber (NVIDIA XIDs, KFD events)
 * and takes its first look at the GPUs (selectors: index, BDF or UUID; NULL or count 0: all). Each
 * poll takes a new look: the first poll gives the first look's news (events reported since the
 * subscription), later ones what changed since the previous poll. One thread at a time. */
typedef struct hipstack_smi_event_watch hipstack_smi_event_watch;
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_event_watch_open(const hipstack_smi_open_options* options,
                                                                   const char* const* selectors, size_t selector_count,
                                                                   hipstack_smi_event_watch** watch);
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_event_watch_poll(hipstack_smi_event_watch* watch, hipstack_smi_list** events);
HIPSTACK_SMI_API void hipstack_smi_event_watch_close(hipstack_smi_event_watch* watch); /* NULL is allowed */

/* ---- Control (docs/control.md) -------------------------------------------------------------------- */

typedef enum hipstack_smi_control_kind {
  HIPSTACK_SMI_CONTROL_COMPUTE_PARTITION = 0,    /* text: SPX, DPX, TPX, QPX, CPX (any case) */
  HIPSTACK_SMI_CONTROL_MEMORY_PARTITION = 1,     /* text: NPS1, NPS2, NPS4, NPS8 */
  HIPSTACK_SMI_CONTROL_POWER_CAP = 2,            /* value: watts */
  HIPSTACK_SMI_CONTROL_PERFORMANCE_LEVEL = 3,    /* text: auto, low, high, manual, profile_peak, ... */
  HIPSTACK_SMI_CONTROL_POWER_PROFILE = 4,        /* text: profile name or number */
  HIPSTACK_SMI_CONTROL_GRAPHICS_CLOCK_RANGE = 5, /* value: min MHz, value2: max MHz */
  HIPSTACK_SMI_CONTROL_MEMORY_CLOCK_RANGE = 6,   /* value: min MHz, value2: max MHz */
  HIPSTACK_SMI_CONTROL_FAN = 7,                  /* value: percent 0..100, or < 0 for automatic */
  HIPSTACK_SMI_CONTROL_RESET = 8
} hipstack_smi_control_kind;

enum {
  HIPSTACK_SMI_CONTROL_DRY_RUN = 1, /* report the writes, make none */
  HIPSTACK_SMI_CONTROL_FORCE = 2    /* go ahead although processes use the GPU */
};

typedef struct hipstack_smi_control_request {
  uint32_t struct_size;
  hipstack_smi_control_kind kind;
  uint32_t flags;             /* HIPSTACK_SMI_CONTROL_DRY_RUN, _FORCE */
  const char* text;           /* the mode, level or profile (kinds that take text) */
  double value;
  double value2;
  uint32_t settle_timeout_ms; /* how long to wait for the driver; 0: 30000 */
} hipstack_smi_control_request;

typedef enum hipstack_smi_control_outcome {
  HIPSTACK_SMI_CONTROL_APPLIED = 0,
  HIPSTACK_SMI_CONTROL_PENDING = 1, /* takes effect after next_step (NPS: driver reload) */
  HIPSTACK_SMI_CONTROL_PLANNED = 2, /* dry run */
  HIPSTACK_SMI_CONTROL_REFUSED = 3, /* nothing changed: see reason */
  HIPSTACK_SMI_CONTROL_FAILED = 4   /* written, but the driver did not reach the new state */
} hipstack_smi_control_outcome;

typedef enum hipstack_smi_refusal_reason {
  HIPSTACK_SMI_REASON_NONE = 0,
  HIPSTACK_SMI_REASON_NEEDS_ROOT = 1,
  HIPSTACK_SMI_REASON_INVALID_VALUE = 2,
  HIPSTACK_SMI_REASON_NOT_SUPPORTED = 3,
  HIPSTACK_SMI_REASON_DEVICE_BUSY = 4,
  HIPSTACK_SMI_REASON_RESET_IN_PROGRESS = 5,
  HIPSTACK_SMI_REASON_VIRTUAL_FUNCTION = 6,
  HIPSTACK_SMI_REASON_DRIVER_REJECTED = 7,
  HIPSTACK_SMI_REASON_TIMED_OUT = 8
} hipstack_smi_refusal_reason;

typedef struct hipstack_smi_control_result {
  uint32_t struct_size;
  hipstack_smi_control_outcome outcome;
  hipstack_smi_refusal_reason reason;
  int32_t error_code;   /* errno behind a refusal or failure */
  const char* action;   /* "compute partition SPX -> CPX" */
  const char* message;  /* what happened, or why not, naming the device and file */
  const char* next_step;/* what the caller must do next ("" when nothing) */
} hipstack_smi_control_result;

/* The call returns HIPSTACK_SMI_OK when it ran (a refusal included): `result` says what happened and
 * its strings, like the `writes` list (made or planned, in order), live until *writes is freed.
 * Holds the system exclusively. */
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_control(hipstack_smi_system* system, uint32_t device,
                                                          const hipstack_smi_control_request* request,
                                                          hipstack_smi_control_result* result, hipstack_smi_list** writes);
HIPSTACK_SMI_API const char* hipstack_smi_outcome_name(hipstack_smi_control_outcome outcome); /* "applied", ... */
HIPSTACK_SMI_API const char* hipstack_smi_reason_name(hipstack_smi_refusal_reason reason);    /* "needs_root", ... */

#ifdef __cplusplus
}
#endif

#endif
