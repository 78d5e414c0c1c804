/* hipstack/smi.h: the C API of libhipstack-smi.
 *
 * Opaque handles, plain structs, result codes; nothing is thrown across this boundary. A
 * hipstack_smi_system may be used from several threads at once. Strings returned inside a sample
 * stay valid until that sample is freed; strings of hipstack_smi_metric_info live forever.
 * hipstack_smi_last_error() gives the calling thread's message for its last failed call. */
#ifndef HIPSTACK_SMI_H
#define HIPSTACK_SMI_H

#include <hipstack/smi_catalogue.h>
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

typedef enum hipstack_smi_result {
  HIPSTACK_SMI_OK = 0,
  HIPSTACK_SMI_ERROR_INVALID_ARGUMENT = 1,
  HIPSTACK_SMI_ERROR_NO_SUCH_DEVICE = 2,
  HIPSTACK_SMI_ERROR_READ_FAILURE = 3,
  HIPSTACK_SMI_ERROR_NO_MEMORY = 4,
  HIPSTACK_SMI_ERROR_INTERNAL = 5
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

/* One constant per catalogue row: HIPSTACK_SMI_METRIC_<name>. */
typedef enum hipstack_smi_metric_id {
#define HIPSTACK_SMI_C_X(id, name, unit, type, scope, kind, instance, help) HIPSTACK_SMI_METRIC_##name = id,
  HIPSTACK_SMI_CATALOGUE(HIPSTACK_SMI_C_X)
#undef HIPSTACK_SMI_C_X
} hipstack_smi_metric_id;

typedef struct hipstack_smi_metric_info {
  uint32_t id;
  const char* name;
  const char* unit;          /* unit name: "celsius", "watt", ... */
  const char* unit_symbol;   /* "C", "W", ... ("" for none) */
  hipstack_smi_value_type type;
  hipstack_smi_scope scope;
  hipstack_smi_kind kind;
  const char* instance_label; /* "" for single-valued metrics */
  const char* help;
} hipstack_smi_metric_info;

typedef struct hipstack_smi_open_options {
  const char* sysfs_root;  /* NULL or "": live /sys (or $HIPSTACK_SYSFS_ROOT) */
  const char* procfs_root; /* NULL or "": live /proc (or $HIPSTACK_PROCFS_ROOT) */
} hipstack_smi_open_options;

typedef struct hipstack_smi_device_info {
  uint32_t index;
  char vendor[16];
  char backend[16];
  char bdf[32];
  char uuid[64];
  char name[128];
  uint32_t partition_count;
} hipstack_smi_device_info;

typedef struct hipstack_smi_reading {
  uint32_t metric_id;
  hipstack_smi_status status;
  int error_code;             /* errno for UNAVAILABLE / ERROR */
  hipstack_smi_value_type type;
  int64_t integer;            /* when type is INTEGER */
  double real;                /* when type is REAL (also set for INTEGER) */
  const char* text;           /* when type is TEXT, else "" */
  const char* instance;       /* "" for single-valued metrics */
  const char* detail;         /* source, or what failed and where */
} hipstack_smi_reading;

/* What to sample: an OR of these. */
enum {
  HIPSTACK_SMI_SAMPLE_IDENTITY = 1,
  HIPSTACK_SMI_SAMPLE_STATIC = 2,
  HIPSTACK_SMI_SAMPLE_LIVE = 4,
  HIPSTACK_SMI_SAMPLE_PCIE_THROUGHPUT = 8, /* amdgpu: the pcie_bw read blocks one second */
  /* WINDOW-kind metrics: averages since this system's previous window look at the device (the first
     look of a system reports them unavailable) */
  HIPSTACK_SMI_SAMPLE_WINDOW = 16
};

typedef struct hipstack_smi_system hipstack_smi_system;
typedef struct hipstack_smi_sample hipstack_smi_sample;

HIPSTACK_SMI_API const char* hipstack_smi_version(void);
HIPSTACK_SMI_API const char* hipstack_smi_result_string(hipstack_smi_result result);
HIPSTACK_SMI_API const char* hipstack_smi_last_error(void);

HIPSTACK_SMI_API size_t hipstack_smi_catalogue_size(void);
HIPSTACK_SMI_API const hipstack_smi_metric_info* hipstack_smi_catalogue_entry(size_t position);
HIPSTACK_SMI_API const hipstack_smi_metric_info* hipstack_smi_metric_by_id(uint32_t id);
HIPSTACK_SMI_API const hipstack_smi_metric_info* hipstack_smi_metric_by_name(const char* name);

HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_open(const hipstack_smi_open_options* options,
                                                       hipstack_smi_system** system);
HIPSTACK_SMI_API void hipstack_smi_close(hipstack_smi_system* system);

HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_device_count(const hipstack_smi_system* system, uint32_t* count);
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_device_get_info(const hipstack_smi_system* system, uint32_t device,
                                                                  hipstack_smi_device_info* info);
/* selector: index, BDF or UUID. */
HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_device_resolve(const hipstack_smi_system* system,
                                                                 const char* selector, uint32_t* device);

HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_sample_device(const hipstack_smi_system* system, uint32_t device,
                                                                unsigned what, hipstack_smi_sample** sample);
HIPSTACK_SMI_API size_t hipstack_smi_sample_size(const hipstack_smi_sample* sample);
HIPSTACK_SMI_API const hipstack_smi_reading* hipstack_smi_sample_reading(const hipstack_smi_sample* sample,
                                                                         size_t position);
HIPSTACK_SMI_API void hipstack_smi_sample_free(hipstack_smi_sample* sample);

/* Changes (docs/control.md): one guarded path checks privilege and unsafe states, writes, and waits
 * for the driver. The call returns HIPSTACK_SMI_OK when it ran; result->outcome says what happened. */
typedef enum hipstack_smi_control_kind {
  HIPSTACK_SMI_CONTROL_COMPUTE_PARTITION = 0, /* text: SPX, DPX, TPX, QPX, CPX (any case) */
  HIPSTACK_SMI_CONTROL_MEMORY_PARTITION = 1,  /* text: NPS1, NPS2, NPS4, NPS8 */
  HIPSTACK_SMI_CONTROL_POWER_CAP = 2,         /* value: watts */
  HIPSTACK_SMI_CONTROL_PERFORMANCE_LEVEL = 3, /* text: auto, low, high, manual, profile_peak, ... */
  HIPSTACK_SMI_CONTROL_POWER_PROFILE = 4,     /* text: profile name or number */
  HIPSTACK_SMI_CONTROL_GRAPHICS_CLOCK_RANGE = 5, /* value: min MHz, value2: max MHz */
  HIPSTACK_SMI_CONTROL_MEMORY_CLOCK_RANGE = 6,   /* value: min MHz, value2: max MHz */
  HIPSTACK_SMI_CONTROL_FAN = 7,               /* value: percent 0..100, or < 0 for automatic */
  HIPSTACK_SMI_CONTROL_RESET = 8
} hipstack_smi_control_kind;

enum {
  HIPSTACK_SMI_CONTROL_DRY_RUN = 1, /* report the writes, make none */
  HIPSTACK_SMI_CONTROL_FORCE = 2    /* go ahead although processes use the GPU */
};

typedef enum hipstack_smi_control_outcome {
  HIPSTACK_SMI_CONTROL_APPLIED = 0,
  HIPSTACK_SMI_CONTROL_PENDING = 1, /* takes effect after next_step (NPS: driver reload) */
  HIPSTACK_SMI_CONTROL_PLANNED = 2, /* dry run */
  HIPSTACK_SMI_CONTROL_REFUSED = 3, /* nothing changed: see reason */
  HIPSTACK_SMI_CONTROL_FAILED = 4   /* written, but the driver did not reach the new state */
} hipstack_smi_control_outcome;

/* Values of hipstack_smi_control_result.reason (the C++ RefusalReason, in order). */
enum {
  HIPSTACK_SMI_REASON_NONE = 0,
  HIPSTACK_SMI_REASON_NEEDS_ROOT = 1,
  HIPSTACK_SMI_REASON_INVALID_VALUE = 2,
  HIPSTACK_SMI_REASON_NOT_SUPPORTED = 3,
  HIPSTACK_SMI_REASON_DEVICE_BUSY = 4,
  HIPSTACK_SMI_REASON_RESET_IN_PROGRESS = 5,
  HIPSTACK_SMI_REASON_VIRTUAL_FUNCTION = 6,
  HIPSTACK_SMI_REASON_DRIVER_REJECTED = 7,
  HIPSTACK_SMI_REASON_TIMED_OUT = 8
};

typedef struct hipstack_smi_control_result {
  hipstack_smi_control_outcome outcome;
  int reason;           /* HIPSTACK_SMI_REASON_* */
  int error_code;       /* errno behind a refusal or failure */
  uint32_t write_count; /* writes made (or planned, for a dry run) */
  char action[128];
  char message[512];
  char next_step[256];
} hipstack_smi_control_result;

HIPSTACK_SMI_API hipstack_smi_result hipstack_smi_control(hipstack_smi_system* system, uint32_t device,
                                                          hipstack_smi_control_kind kind, const char* text,
                                                          double value, double value2, unsigned flags,
                                                          hipstack_smi_control_result* result);

#ifdef __cplusplus
}
#endif

#endif
