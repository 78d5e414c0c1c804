"""ctypes declarations of libhipstack-smi's C API (hipstack/smi.h), and the library's loading.

Each Structure mirrors a C struct of smi.h field for field, and each constant below its C enumerator
or macro; test_layout.py compiles C programs that print every struct's size and field offsets and
every constant's value and compares them with these, so a drift between the header and this file
fails the tests. Catalogue facts (metric ids, names, units, check names) are not copied here: they
are read from the library at run time.
"""
import ctypes
import os

API_VERSION = 3  # HIPSTACK_SMI_API_VERSION this module is written for (2: hipstack_smi_read_values; 3: foreign names)

# hipstack_smi_result
OK = 0
ERROR_INVALID_ARGUMENT = 1
ERROR_NO_SUCH_DEVICE = 2
ERROR_READ_FAILURE = 3
ERROR_NO_MEMORY = 4
ERROR_INTERNAL = 5
ERROR_INSUFFICIENT_SIZE = 6
ERROR_NOT_FOUND = 7
ERROR_TIMED_OUT = 8
NO_READ_DEADLINE = 0xFFFFFFFF  # HIPSTACK_SMI_NO_READ_DEADLINE

STATUS_NAMES = ("ok", "not_supported", "unavailable", "error")  # hipstack_smi_status, by value
TYPE_INTEGER, TYPE_REAL, TYPE_TEXT = 0, 1, 2
SCOPE_NAMES = ("device", "partition", "process", "link")
KIND_NAMES = ("identity", "static", "live", "counter", "window")
COST_NAMES = ("cheap", "costly", "window", "blocking")
VERDICT_NAMES = ("PASS", "WARN", "FAIL", "UNKNOWN")
OUTCOME_NAMES = ("applied", "pending", "planned", "refused", "failed")
FOREIGN_TOOLS = ("nvidia-smi", "pynvml", "amdsmi", "nfd", "rocm-smi", "jobs")  # hipstack_smi_foreign_tool, by value

OPEN_NO_AMDGPU, OPEN_NO_NVML, OPEN_KEEP_VENDOR_INIT = 1, 2, 4
SAMPLE_FLAGS = {"identity": 1, "static": 2, "live": 4, "pcie_throughput": 8, "window": 16}
CONTROL_KINDS = {"compute_partition": 0, "memory_partition": 1, "power_cap": 2, "performance_level": 3,
                 "power_profile": 4, "graphics_clock_range": 5, "memory_clock_range": 6, "fan": 7, "reset": 8}
CONTROL_DRY_RUN, CONTROL_FORCE = 1, 2

(LIST_DEVICES, LIST_BACKENDS, LIST_READINGS, LIST_PARTITIONS, LIST_PROCESSES, LIST_LINKS, LIST_BAD_PAGES,
 LIST_HEALTH_FINDINGS, LIST_EVENTS, LIST_CONTROL_WRITES) = range(10)

_c_char_p = ctypes.c_char_p
_u32, _i32, _u64, _i64 = ctypes.c_uint32, ctypes.c_int32, ctypes.c_uint64, ctypes.c_int64
_enum = ctypes.c_int  # C enums of smi.h are int-sized


class Sized(ctypes.Structure):
    """A size-prefixed struct: made with struct_size set, as HIPSTACK_SMI_STRUCT_INIT does."""

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(self), **fields)


class MetricInfo(Sized):
    c_name = "hipstack_smi_metric_info"
    _fields_ = [("struct_size", _u32), ("id", _u32), ("name", _c_char_p), ("unit", _c_char_p),
                ("unit_symbol", _c_char_p), ("type", _enum), ("scope", _enum), ("kind", _enum), ("cost", _enum),
                ("instance_label", _c_char_p), ("help", _c_char_p)]


class ForeignName(Sized):
    c_name = "hipstack_smi_foreign_name"
    _fields_ = [("struct_size", _u32), ("tool", _enum), ("name", _c_char_p), ("metrics", _c_char_p),
                ("metric_ids", ctypes.POINTER(_u32)), ("metric_count", ctypes.c_size_t), ("instance", _c_char_p),
                ("note", _c_char_p)]


class AuditRecord(Sized):
    c_name = "hipstack_smi_audit_record"
    _fields_ = [("struct_size", _u32), ("uid", _u32), ("pid", _i32), ("device", _u32), ("bdf", _c_char_p),
                ("action", _c_char_p), ("path", _c_char_p), ("value", _c_char_p), ("result", _c_char_p)]


AUDIT_FN = ctypes.CFUNCTYPE(None, ctypes.POINTER(AuditRecord), ctypes.c_void_p)


class OpenOptions(Sized):
    c_name = "hipstack_smi_open_options"
    _fields_ = [("struct_size", _u32), ("flags", _u32), ("sysfs_root", _c_char_p), ("procfs_root", _c_char_p),
                ("devfs_root", _c_char_p), ("nvml_library", _c_char_p), ("audit", AUDIT_FN),
                ("audit_user_data", ctypes.c_void_p), ("read_deadline_ms", _u32)]


class DeviceInfo(Sized):
    c_name = "hipstack_smi_device_info"
    _fields_ = [("struct_size", _u32), ("index", _u32), ("vendor", _c_char_p), ("backend", _c_char_p),
                ("bdf", _c_char_p), ("uuid", _c_char_p), ("name", _c_char_p), ("partition_count", _u32),
                ("fault", _c_char_p)]


class BackendInfo(Sized):
    c_name = "hipstack_smi_backend_info"
    _fields_ = [("struct_size", _u32), ("name", _c_char_p), ("present", _u32), ("reason", _c_char_p)]


class Reading(Sized):
    c_name = "hipstack_smi_reading"
    _fields_ = [("struct_size", _u32), ("metric_id", _u32), ("status", _enum), ("type", _enum),
                ("error_code", _i32), ("integer", _i64), ("real", ctypes.c_double), ("text", _c_char_p),
                ("instance", _c_char_p), ("detail", _c_char_p)]


class Partition(Sized):
    c_name = "hipstack_smi_partition"
    _fields_ = [("struct_size", _u32), ("index", _u32), ("id", _c_char_p), ("bdf", _c_char_p),
                ("readings", ctypes.c_void_p)]


class Process(Sized):
    c_name = "hipstack_smi_process"
    _fields_ = [("struct_size", _u32), ("pid", _i32), ("name", _c_char_p), ("user", _c_char_p),
                ("command_line", _c_char_p), ("cgroup", _c_char_p), ("readings", ctypes.c_void_p)]


class Link(Sized):
    c_name = "hipstack_smi_link"
    _fields_ = [("struct_size", _u32), ("from_", _u32), ("to", _u32), ("readings", ctypes.c_void_p)]
    c_field_names = {"from_": "from"}  # `from` is a Python keyword


class BadPage(Sized):
    c_name = "hipstack_smi_bad_page"
    _fields_ = [("struct_size", _u32), ("frame", _u64), ("size", _u64), ("state", _c_char_p)]


class HealthFinding(Sized):
    c_name = "hipstack_smi_health_finding"
    _fields_ = [("struct_size", _u32), ("check", _enum), ("check_name", _c_char_p), ("verdict", _enum),
                ("reading", _c_char_p), ("threshold", _c_char_p), ("message", _c_char_p), ("remediation", _c_char_p)]


class Event(Sized):
    c_name = "hipstack_smi_event"
    _fields_ = [("struct_size", _u32), ("kind", _c_char_p), ("device", _u32), ("bdf", _c_char_p), ("uuid", _c_char_p),
                ("metric", _c_char_p), ("before", _c_char_p), ("after", _c_char_p), ("message", _c_char_p)]


class ControlWrite(Sized):
    c_name = "hipstack_smi_control_write"
    _fields_ = [("struct_size", _u32), ("path", _c_char_p), ("value", _c_char_p), ("host_path", _c_char_p),
                ("done", _u32), ("error_code", _i32)]


class Value(ctypes.Structure):
    """hipstack_smi_read_values's value (not size-prefixed: it never grows)."""
    c_name = "hipstack_smi_value"
    _fields_ = [("status", _enum), ("type", _enum), ("integer", _i64), ("real", ctypes.c_double)]


class SampleOptions(Sized):
    c_name = "hipstack_smi_sample_options"
    _fields_ = [("struct_size", _u32), ("what", _u32), ("window_ms", _u32), ("metrics", ctypes.POINTER(_u32)),
                ("metric_count", ctypes.c_size_t)]


class HealthPolicy(Sized):
    c_name = "hipstack_smi_health_policy"
    _fields_ = [("struct_size", _u32), ("thermal_margin", ctypes.c_double), ("throttle_share", ctypes.c_double),
                ("power_cap_share", ctypes.c_double), ("busy_for_clock_check", ctypes.c_double),
                ("clock_low_share", ctypes.c_double), ("correctable_ecc", _i64), ("pcie_replays", _i64),
                ("bad_page_share", ctypes.c_double)]


class ControlRequest(Sized):
    c_name = "hipstack_smi_control_request"
    _fields_ = [("struct_size", _u32), ("kind", _enum), ("flags", _u32), ("text", _c_char_p),
                ("value", ctypes.c_double), ("value2", ctypes.c_double), ("settle_timeout_ms", _u32)]


class ControlResult(Sized):
    c_name = "hipstack_smi_control_result"
    _fields_ = [("struct_size", _u32), ("outcome", _enum), ("reason", _enum), ("error_code", _i32),
                ("action", _c_char_p), ("message", _c_char_p), ("next_step", _c_char_p)]


STRUCTS = (MetricInfo, ForeignName, AuditRecord, OpenOptions, DeviceInfo, BackendInfo, Reading, Partition, Process, Link,
           BadPage, HealthFinding, Event, ControlWrite, Value, SampleOptions, HealthPolicy, ControlRequest, ControlResult)

# The list getters, by list kind: (C function, item struct).
LIST_GETTERS = {
    LIST_DEVICES: ("hipstack_smi_list_get_device", DeviceInfo),
    LIST_BACKENDS: ("hipstack_smi_list_get_backend", BackendInfo),
    LIST_READINGS: ("hipstack_smi_list_get_reading", Reading),
    LIST_PARTITIONS: ("hipstack_smi_list_get_partition", Partition),
    LIST_PROCESSES: ("hipstack_smi_list_get_process", Process),
    LIST_LINKS: ("hipstack_smi_list_get_link", Link),
    LIST_BAD_PAGES: ("hipstack_smi_list_get_bad_page", BadPage),
    LIST_HEALTH_FINDINGS: ("hipstack_smi_list_get_finding", HealthFinding),
    LIST_EVENTS: ("hipstack_smi_list_get_event", Event),
    LIST_CONTROL_WRITES: ("hipstack_smi_list_get_control_write", ControlWrite),
}

_P = ctypes.POINTER
_vp = ctypes.c_void_p
_res = ctypes.c_int
# name: (result type, argument types)
_SIGNATURES = {
    "hipstack_smi_version": (_c_char_p, []),
    "hipstack_smi_api_version": (_u32, []),
    "hipstack_smi_result_string": (_c_char_p, [_res]),
    "hipstack_smi_last_error": (_c_char_p, []),
    "hipstack_smi_catalogue_size": (ctypes.c_size_t, []),
    "hipstack_smi_catalogue_get": (_res, [ctypes.c_size_t, _P(MetricInfo)]),
    "hipstack_smi_metric_by_id": (_res, [_u32, _P(MetricInfo)]),
    "hipstack_smi_metric_by_name": (_res, [_c_char_p, _P(MetricInfo)]),
    "hipstack_smi_foreign_names_size": (ctypes.c_size_t, [_enum]),
    "hipstack_smi_foreign_name_get": (_res, [_enum, ctypes.c_size_t, _P(ForeignName)]),
    "hipstack_smi_foreign_name_find": (_res, [_enum, _c_char_p, _P(ForeignName)]),
    "hipstack_smi_health_check_name": (_c_char_p, [_enum]),
    "hipstack_smi_verdict_name": (_c_char_p, [_enum]),
    "hipstack_smi_open": (_res, [_P(OpenOptions), _P(_vp)]),
    "hipstack_smi_close": (None, [_vp]),
    "hipstack_smi_list_get_kind": (_enum, [_vp]),
    "hipstack_smi_list_size": (ctypes.c_size_t, [_vp]),
    "hipstack_smi_list_free": (None, [_vp]),
    "hipstack_smi_list_find_reading": (_res, [_vp, _u32, _c_char_p, _P(Reading)]),
    "hipstack_smi_get_devices": (_res, [_vp, _P(_vp)]),
    "hipstack_smi_get_backends": (_res, [_vp, _P(_vp)]),
    "hipstack_smi_device_count": (_res, [_vp, _P(_u32)]),
    "hipstack_smi_device_resolve": (_res, [_vp, _c_char_p, _P(_u32)]),
    "hipstack_smi_device_get_fault": (_res, [_vp, _u32, ctypes.c_char_p, _P(ctypes.c_size_t)]),
    "hipstack_smi_sample_device": (_res, [_vp, _u32, _P(SampleOptions), _P(_vp)]),
    "hipstack_smi_read_values": (_res, [_vp, _u32, _P(_u32), ctypes.c_size_t, _P(Value)]),
    "hipstack_smi_get_partitions": (_res, [_vp, _u32, _P(_vp)]),
    "hipstack_smi_get_processes": (_res, [_vp, _u32, _u32, _P(_vp)]),
    "hipstack_smi_get_links": (_res, [_vp, _P(_vp)]),
    "hipstack_smi_get_bad_pages": (_res, [_vp, _u32, _P(_vp)]),
    "hipstack_smi_health_policy_init": (_res, [_P(HealthPolicy)]),
    "hipstack_smi_health_policy_load": (_res, [_c_char_p, _P(HealthPolicy)]),
    "hipstack_smi_check_health": (_res, [_vp, _u32, _P(HealthPolicy), _P(_enum), _P(_vp)]),
    "hipstack_smi_event_watch_open": (_res, [_P(OpenOptions), _P(_c_char_p), ctypes.c_size_t, _P(_vp)]),
    "hipstack_smi_event_watch_poll": (_res, [_vp, _P(_vp)]),
    "hipstack_smi_event_watch_close": (None, [_vp]),
    "hipstack_smi_control": (_res, [_vp, _u32, _P(ControlRequest), _P(ControlResult), _P(_vp)]),
    "hipstack_smi_outcome_name": (_c_char_p, [_enum]),
    "hipstack_smi_reason_name": (_c_char_p, [_enum]),
}
for _name, _struct in LIST_GETTERS.values():
    _SIGNATURES[_name] = (_res, [_vp, ctypes.c_size_t, _P(_struct)])

LIBRARY_NAME = "libhipstack-smi.so.0"


def _candidates():
    """Where the library may be: $HIPSTACK_SMI_LIBRARY; the library of the prefix this package is
    installed in (_install.py, written at install time, says where relative to the package);
    /opt/hipstack/lib; the dynamic linker's search."""
    if os.environ.get("HIPSTACK_SMI_LIBRARY"):
        yield os.environ["HIPSTACK_SMI_LIBRARY"]
        return
    try:
        from ._install import LIBRARY_DIR
    except ImportError:  # the source tree: not installed
        LIBRARY_DIR = None
    if LIBRARY_DIR is not None:
        here = os.path.dirname(os.path.realpath(__file__))
        yield os.path.normpath(os.path.join(here, LIBRARY_DIR, LIBRARY_NAME))
    yield os.path.join("/opt/hipstack/lib", LIBRARY_NAME)
    yield LIBRARY_NAME


def load():
    """The loaded library with every signature declared; OSError naming each place tried."""
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(f"{path} (no such file)")
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
            continue
        for name, (restype, argtypes) in _SIGNATURES.items():
            function = getattr(lib, name)
            function.restype = restype
            function.argtypes = argtypes
        if lib.hipstack_smi_api_version() < API_VERSION:
            raise OSError(f"{path} implements C API {lib.hipstack_smi_api_version()}, this module needs {API_VERSION}")
        return lib
    raise OSError("libhipstack-smi not found; tried: " + "; ".join(tried) +
                  " (set HIPSTACK_SMI_LIBRARY to the library's path)")
