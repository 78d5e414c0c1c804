"""hipstack: GPU identity, telemetry, partitions, processes, links, health and events for AMD and
NVIDIA GPUs, through libhipstack-smi's C API (docs/python.md).

    import hipstack
    with hipstack.System() as system:                # or System(sysfs_root="capture/sys")
        for gpu in system.devices():
            for r in system.sample(gpu.index):
                if r.ok:
                    print(gpu.bdf, r.metric, r.instance, r.value, r.unit)

Every reading has a status ("ok", "not_supported", "unavailable", "error"): a metric the GPU does not
provide is a value, not an exception. Calls that fail raise hipstack.Error (a subclass per cause).
Every call that reads the GPUs has a deadline (read_deadline_ms, 10 s unless set): a read stuck in a
hung driver raises hipstack.TimedOut instead of hanging the program.
"""
import ctypes
import struct
import threading
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Union

from . import _capi

__all__ = ["System", "Query", "EventWatch", "Error", "InvalidArgument", "NoSuchDevice", "ReadFailure", "NotFound", "TimedOut",
           "NO_READ_DEADLINE",
           "Device", "Backend", "Reading", "Partition", "Process", "Link", "BadPage", "HealthFinding",
           "HealthReport", "Event", "ControlResult", "MetricInfo", "catalogue", "metric", "health_checks",
           "ForeignName", "foreign_table", "foreign_names",
           "version"]

_lib = None


def _library():
    global _lib
    if _lib is None:
        _lib = _capi.load()
    return _lib


def _text(raw: Optional[bytes]) -> str:
    return raw.decode("utf-8", "replace") if raw else ""


class Error(Exception):
    """A call into libhipstack-smi failed; `code` is its hipstack_smi_result."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


class InvalidArgument(Error, ValueError):
    pass


class NoSuchDevice(Error, LookupError):
    pass


class ReadFailure(Error, OSError):
    pass


class NotFound(Error, LookupError):
    pass


class TimedOut(Error, TimeoutError):
    """A read ran past the read deadline, or the GPU's previous read has not returned yet (a hung
    driver): the call gave up; the read goes on in the background."""


NO_READ_DEADLINE = _capi.NO_READ_DEADLINE  # read_deadline_ms that lets calls wait as long as the kernel takes

_ERRORS = {_capi.ERROR_INVALID_ARGUMENT: InvalidArgument, _capi.ERROR_NO_SUCH_DEVICE: NoSuchDevice,
           _capi.ERROR_READ_FAILURE: ReadFailure, _capi.ERROR_NOT_FOUND: NotFound, _capi.ERROR_TIMED_OUT: TimedOut}


def _check(result: int) -> None:
    if result != _capi.OK:
        lib = _library()
        message = _text(lib.hipstack_smi_last_error()) or _text(lib.hipstack_smi_result_string(result))
        raise _ERRORS.get(result, Error)(result, message)


def version() -> str:
    """The library's version, e.g. "0.1.0"."""
    return _text(_library().hipstack_smi_version())


@dataclass(frozen=True)
class MetricInfo:
    id: int
    name: str
    unit: str         # "celsius", "watt", ... ("none")
    unit_symbol: str  # "C", "W", ... ("" for none)
    type: str         # "integer", "real", "text"
    scope: str        # "device", "partition", "process", "link"
    kind: str         # "identity", "static", "live", "counter", "window"
    cost: str         # "cheap", "costly", "window", "blocking"
    instance_label: str
    help: str


def _metric_info(c: _capi.MetricInfo) -> MetricInfo:
    return MetricInfo(c.id, _text(c.name), _text(c.unit), _text(c.unit_symbol), ("integer", "real", "text")[c.type],
                      _capi.SCOPE_NAMES[c.scope], _capi.KIND_NAMES[c.kind], _capi.COST_NAMES[c.cost],
                      _text(c.instance_label), _text(c.help))


_catalogue: Optional[List[MetricInfo]] = None
_metrics_by_key: Dict[Union[int, str], MetricInfo] = {}  # each metric by id and by name (every reading looks one up)


def catalogue() -> List[MetricInfo]:
    """Every metric, in catalogue order (docs/metrics.md)."""
    global _catalogue
    if _catalogue is None:
        lib = _library()
        entries = []
        for position in range(lib.hipstack_smi_catalogue_size()):
            info = _capi.MetricInfo()
            _check(lib.hipstack_smi_catalogue_get(position, ctypes.byref(info)))
            entries.append(_metric_info(info))
        _metrics_by_key.update({m.id: m for m in entries})
        _metrics_by_key.update({m.name: m for m in entries})
        _catalogue = entries
    return _catalogue


def metric(key: Union[int, str]) -> MetricInfo:
    """A metric by id or name; NotFound when the catalogue has none."""
    catalogue()
    found = _metrics_by_key.get(key) if isinstance(key, (int, str)) and not isinstance(key, bool) else None
    if found is None:
        raise NotFound(_capi.ERROR_NOT_FOUND, f"no metric {key!r} in the catalogue")
    return found


@dataclass(frozen=True)
class ForeignName:
    """A name another tool gives hipstack's metrics (docs/foreign-names.md)."""
    name: str                 # "nvmlDeviceGetPowerUsage", "amdsmi_get_power_info.socket_power", "power.draw"
    metrics: Tuple[str, ...]  # the catalogue metrics it is answered from, in candidate order
    instance: str             # the metric's instance it reads ("" for none)
    note: str                 # the conversion ("W -> mW") and how the metrics combine


_foreign: Dict[str, Dict[str, ForeignName]] = {}  # tool -> name -> ForeignName, read once per tool


def foreign_table(tool: str) -> Dict[str, ForeignName]:
    """Every name of a tool ("nvidia-smi", "pynvml", "amdsmi") in the library's table, in its order;
    InvalidArgument for another tool. Read from the library once."""
    table = _foreign.get(tool)
    if table is None:
        if tool not in _capi.FOREIGN_TOOLS:
            raise InvalidArgument(_capi.ERROR_INVALID_ARGUMENT,
                                  f"no foreign tool {tool!r} (one of {', '.join(_capi.FOREIGN_TOOLS)})")
        lib, code = _library(), _capi.FOREIGN_TOOLS.index(tool)
        table = {}
        for position in range(lib.hipstack_smi_foreign_names_size(code)):
            c = _capi.ForeignName()
            _check(lib.hipstack_smi_foreign_name_get(code, position, ctypes.byref(c)))
            metrics = tuple(_text(c.metrics).split(",")) if c.metrics else ()
            table[_text(c.name)] = ForeignName(_text(c.name), metrics, _text(c.instance), _text(c.note))
        table = _foreign.setdefault(tool, table)
    return table


def foreign_names(tool: str) -> Dict[str, Tuple[str, ...]]:
    """A tool's names -> the catalogue metrics each is answered from, in candidate order (the first
    the GPU gives answers): hipstack.pynvml and hipstack.amdsmi take every metric name from here."""
    return {name: entry.metrics for name, entry in foreign_table(tool).items()}


def health_checks() -> List[str]:
    """The names of the health checks this library runs (hipstack/smi_checks.h), by id."""
    lib = _library()
    names = []
    check = 1
    while _text(lib.hipstack_smi_health_check_name(check)):
        names.append(_text(lib.hipstack_smi_health_check_name(check)))
        check += 1
    return names


@dataclass(frozen=True)
class Reading:
    metric: str
    instance: str  # "" for single-valued metrics
    status: str    # "ok", "not_supported", "unavailable", "error"
    value: Union[int, float, str, None]  # in the catalogue's unit; None unless status is "ok"
    unit: str      # the unit's symbol ("C", "W", "B", ...)
    error_code: int  # errno for "unavailable" and "error"
    detail: str    # the source, or what failed and where
    id: int

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _reading(c: _capi.Reading) -> Reading:
    info = metric(c.metric_id)
    value: Union[int, float, str, None] = None
    if c.status == 0:
        value = c.integer if c.type == _capi.TYPE_INTEGER else c.real if c.type == _capi.TYPE_REAL else _text(c.text)
    return Reading(info.name, _text(c.instance), _capi.STATUS_NAMES[c.status], value, info.unit_symbol, c.error_code,
                   _text(c.detail), c.metric_id)


@dataclass(frozen=True)
class Device:
    index: int
    vendor: str
    backend: str
    bdf: str
    uuid: str
    name: str
    partition_count: int
    fault: str  # why the GPU cannot be read now; "" when it can


@dataclass(frozen=True)
class Backend:
    name: str
    present: bool
    reason: str


@dataclass(frozen=True)
class Partition:
    index: int
    id: str
    bdf: str
    readings: List[Reading] = field(default_factory=list)


@dataclass(frozen=True)
class Process:
    pid: int
    name: str
    user: str
    command_line: str
    cgroup: str
    readings: List[Reading] = field(default_factory=list)


@dataclass(frozen=True)
class Link:
    source: int  # device indices
    target: int
    readings: List[Reading] = field(default_factory=list)


@dataclass(frozen=True)
class BadPage:
    frame: int
    size: int
    state: str


@dataclass(frozen=True)
class HealthFinding:
    check: str    # "thermal.temperature", ...
    verdict: str  # "PASS", "WARN", "FAIL", "UNKNOWN"
    reading: str
    threshold: str
    message: str
    remediation: str


@dataclass(frozen=True)
class HealthReport:
    device: int
    overall: str  # the worst evaluated verdict; "UNKNOWN" when no check could be evaluated
    findings: List[HealthFinding]


@dataclass(frozen=True)
class Event:
    kind: str
    device: int
    bdf: str
    uuid: str
    metric: str
    before: str
    after: str
    message: str


@dataclass(frozen=True)
class ControlWrite:
    path: str
    value: str
    host_path: str
    done: bool
    error_code: int


@dataclass(frozen=True)
class ControlResult:
    outcome: str  # "applied", "pending", "planned", "refused", "failed"
    reason: str   # "none", "needs_root", ...
    error_code: int
    action: str
    message: str
    next_step: str
    writes: List[ControlWrite]

    @property
    def ok(self) -> bool:
        return self.outcome in ("applied", "pending", "planned")


class _List:
    """A hipstack_smi_list, freed when the block ends; items converted by `convert`."""

    def __init__(self, handle: ctypes.c_void_p):
        self.handle = handle

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _library().hipstack_smi_list_free(self.handle)

    def items(self, convert=lambda c: c) -> list:
        return _items(self.handle, convert)


def _items(handle, convert) -> list:
    lib = _library()
    function_name, struct = _capi.LIST_GETTERS[lib.hipstack_smi_list_get_kind(handle)]
    getter = getattr(lib, function_name)
    out = []
    for position in range(lib.hipstack_smi_list_size(handle)):
        item = struct()
        _check(getter(handle, position, ctypes.byref(item)))
        out.append(convert(item))
    return out


def _readings(handle) -> List[Reading]:
    return _items(handle, _reading)


def _options(sysfs_root, procfs_root, devfs_root, nvml_library, amdgpu, nvml, keep_vendor_init,
             read_deadline_ms) -> _capi.OpenOptions:
    flags = (0 if amdgpu else _capi.OPEN_NO_AMDGPU) | (0 if nvml else _capi.OPEN_NO_NVML)
    flags |= _capi.OPEN_KEEP_VENDOR_INIT if keep_vendor_init else 0
    encode = lambda s: s.encode() if s else None  # noqa: E731
    if read_deadline_ms is None:
        deadline = 0  # the library's default
    elif isinstance(read_deadline_ms, int) and not isinstance(read_deadline_ms, bool) and 1 <= read_deadline_ms <= NO_READ_DEADLINE:
        deadline = read_deadline_ms
    else:
        raise InvalidArgument(_capi.ERROR_INVALID_ARGUMENT,
                              f"read_deadline_ms must be None, an int from 1 to {NO_READ_DEADLINE} or NO_READ_DEADLINE, "
                              f"not {read_deadline_ms!r}")
    return _capi.OpenOptions(flags=flags, sysfs_root=encode(sysfs_root), procfs_root=encode(procfs_root),
                             devfs_root=encode(devfs_root), nvml_library=encode(nvml_library), read_deadline_ms=deadline)


class _Owned:
    """An object of the C API owned by this Python object: closed by close(), a with block, or
    garbage collection. Subclasses name their C close call in _closer and set _handle."""
    _closer = ""
    _handle = ctypes.c_void_p()

    def close(self) -> None:
        if self._handle:
            getattr(_library(), self._closer)(self._handle)
            self._handle = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if _lib is not None:
            self.close()


# The sample flag that reads each kind of metric (hipstack_smi_sample_options.what).
_KIND_FLAGS = {"identity": _capi.SAMPLE_FLAGS["identity"], "static": _capi.SAMPLE_FLAGS["static"],
               "live": _capi.SAMPLE_FLAGS["live"], "counter": _capi.SAMPLE_FLAGS["live"],
               "window": _capi.SAMPLE_FLAGS["window"]}


class Query:
    """The same few single-valued DEVICE-scope metrics asked of a GPU again and again (a poller's loop;
    each hipstack.pynvml call). The ids and the C options are made once and only those metrics are
    read: numbers by one hipstack_smi_read_values call into a buffer kept per thread, text through a
    sample's list without making Readings. A call costs microseconds. values() gives None for a metric
    that is not ok; System.sample() says why.
    Made by System.query(); used while its System is open; safe to use from several threads."""

    def __init__(self, system: "System", metrics: Sequence[Union[int, str]]):
        infos = [metric(m) for m in metrics]
        for info in infos:
            if info.scope != "device":
                raise InvalidArgument(_capi.ERROR_INVALID_ARGUMENT, f"{info.name} is a {info.scope} metric, not a GPU's")
        what = 0
        for info in infos:
            what |= _KIND_FLAGS[info.kind]
        self._system = system
        self._ids = (ctypes.c_uint32 * len(infos))(*[info.id for info in infos])
        self._options = _capi.SampleOptions(what=what, window_ms=0, metrics=self._ids, metric_count=len(infos))
        self._options_ref = ctypes.byref(self._options)
        self._metrics = [(info.id, ("integer", "real", "text").index(info.type)) for info in infos]
        self._lib = _library()
        self._buffers = threading.local()  # each thread's buffers, made once
        # Numbers only (what hipstack_smi_read_values reads): one C call, its values unpacked at once.
        self._numeric = all(i.type != "text" and not i.instance_label and i.cost not in ("window", "blocking")
                            for i in infos)
        if self._numeric:
            # The call without argtypes, its arguments made ctypes objects here once: ctypes then
            # passes them as they are instead of converting each on every call (~1 µs a call).
            self._read_values = self._lib._FuncPtr(("hipstack_smi_read_values", self._lib))
            self._read_values.restype = ctypes.c_int
            self._count = ctypes.c_size_t(len(infos))
            self._value_array = _capi.Value * len(infos)
            self._unpack = struct.Struct("=" + "iiqd" * len(infos)).unpack_from  # hipstack_smi_value's layout
            # Per metric: where its status and its value are in the unpacked fields.
            self._positions = [(4 * i, 4 * i + (2 if info.type == "integer" else 3)) for i, info in enumerate(infos)]
        # A query of one number: where its value is (value() then makes no list).
        self._single = self._positions[0][1] if self._numeric and len(infos) == 1 else None

    def _reader(self):
        """This thread's reader of the numbers: hipstack_smi_read_values with its arguments bound and a
        buffer of this thread's, made at the thread's first call. Gives the unpacked fields."""
        system, read_values, ids, count, unpack = self._system, self._read_values, self._ids, self._count, self._unpack
        out = self._value_array()

        def read(device: int) -> tuple:
            if not 0 <= device < 0x80000000:  # passed as a C int (no argtypes); no GPU has such an index
                raise NoSuchDevice(_capi.ERROR_NO_SUCH_DEVICE, f"no GPU {device}")
            # The handle is looked up on every call: a closed System's is NULL, which the library refuses.
            result = read_values(system._handle, device, ids, count, out)
            if result != 0:
                _check(result)
            return unpack(out)
        self._buffers.read = read
        return read

    def reader(self, device: int):
        """A function of no arguments giving value(device), the cheapest way to read one number again
        and again (a poller's loop; each hipstack.pynvml call): the device and a buffer are bound to it.
        For the thread that made it only (the buffer is that thread's). A query of several metrics or
        of a text gives a function of value(device) as it is."""
        if self._single is None:
            return lambda: self.value(device)
        if not 0 <= device < 0x80000000:
            raise NoSuchDevice(_capi.ERROR_NO_SUCH_DEVICE, f"no GPU {device}")
        system, read_values, ids, count = self._system, self._read_values, self._ids, self._count
        out = self._value_array()
        which = ctypes.c_uint32(device)
        # Views of the buffer's status and value fields (hipstack_smi_value): read without unpacking.
        status = ctypes.c_int32.from_buffer(out, _capi.Value.status.offset)
        field = "integer" if self._single == 2 else "real"
        number = (ctypes.c_int64 if field == "integer" else ctypes.c_double).from_buffer(out, getattr(_capi.Value, field).offset)

        def read():
            # The handle is looked up on every call: a closed System's is NULL, which the library refuses.
            result = read_values(system._handle, which, ids, count, out)
            if result != 0:
                _check(result)
            return number.value if status.value == 0 else None
        return read

    def value(self, device: int):
        """values(device)[0]: a query of one number answers without making a list (a poller's call)."""
        if self._single is None:
            return self.values(device)[0]
        fields = (getattr(self._buffers, "read", None) or self._reader())(device)
        return fields[self._single] if fields[0] == 0 else None

    def values(self, device: int) -> list:
        """Each metric's value in the catalogue's unit, in the order asked; None where its reading is not ok."""
        if self._numeric:
            fields = (getattr(self._buffers, "read", None) or self._reader())(device)
            return [fields[value] if fields[status] == 0 else None for status, value in self._positions]
        lib = self._lib
        buffers = self._buffers
        if not hasattr(buffers, "handle"):
            buffers.handle, buffers.reading = ctypes.c_void_p(), _capi.Reading()
            buffers.handle_ref, buffers.reading_ref = ctypes.byref(buffers.handle), ctypes.byref(buffers.reading)
        result = lib.hipstack_smi_sample_device(self._system._handle, device, self._options_ref, buffers.handle_ref)
        if result != _capi.OK:
            _check(result)
        handle, found = buffers.handle, buffers.reading
        try:
            out = []
            for metric_id, value_type in self._metrics:
                if lib.hipstack_smi_list_find_reading(handle, metric_id, None, buffers.reading_ref) != _capi.OK \
                        or found.status != 0:
                    out.append(None)
                elif value_type == _capi.TYPE_INTEGER:
                    out.append(found.integer)
                elif value_type == _capi.TYPE_REAL:
                    out.append(found.real)
                else:
                    out.append(_text(found.text))
            return out
        finally:
            lib.hipstack_smi_list_free(handle)


class System(_Owned):
    """The GPUs of this machine (or of a recorded capture). Safe to use from several threads.

    sysfs_root, procfs_root, devfs_root: read these in place of /sys, /proc, /dev (a capture);
    nvml_library: the NVML to load; amdgpu=False / nvml=False leave a backend out;
    read_deadline_ms: how long a call that reads the GPUs may take before it raises TimedOut (None:
    the library's default, 10 s; NO_READ_DEADLINE: as long as the kernel takes)."""

    def __init__(self, sysfs_root: Optional[str] = None, procfs_root: Optional[str] = None,
                 devfs_root: Optional[str] = None, nvml_library: Optional[str] = None, amdgpu: bool = True,
                 nvml: bool = True, keep_vendor_init: bool = False, read_deadline_ms: Optional[int] = None):
        lib = _library()
        self._handle = ctypes.c_void_p()
        options = _options(sysfs_root, procfs_root, devfs_root, nvml_library, amdgpu, nvml, keep_vendor_init,
                           read_deadline_ms)
        _check(lib.hipstack_smi_open(ctypes.byref(options), ctypes.byref(self._handle)))

    _closer = "hipstack_smi_close"

    def _list(self, call, *args) -> _List:
        handle = ctypes.c_void_p()
        _check(call(self._handle, *args, ctypes.byref(handle)))
        return _List(handle)

    def devices(self) -> List[Device]:
        with self._list(_library().hipstack_smi_get_devices) as devices:
            return devices.items(lambda c: Device(c.index, _text(c.vendor), _text(c.backend), _text(c.bdf),
                                                  _text(c.uuid), _text(c.name), c.partition_count, _text(c.fault)))

    def backends(self) -> List[Backend]:
        with self._list(_library().hipstack_smi_get_backends) as backends:
            return backends.items(lambda c: Backend(_text(c.name), bool(c.present), _text(c.reason)))

    def resolve(self, selector: str) -> int:
        """The index of the GPU an index, BDF or UUID names; NoSuchDevice otherwise."""
        index = ctypes.c_uint32()
        _check(_library().hipstack_smi_device_resolve(self._handle, selector.encode(), ctypes.byref(index)))
        return index.value

    def fault(self, device: int) -> str:
        lib = _library()
        size = ctypes.c_size_t(0)
        result = lib.hipstack_smi_device_get_fault(self._handle, device, None, ctypes.byref(size))
        if result != _capi.ERROR_INSUFFICIENT_SIZE:
            _check(result)
        buffer = ctypes.create_string_buffer(size.value)
        _check(lib.hipstack_smi_device_get_fault(self._handle, device, buffer, ctypes.byref(size)))
        return _text(buffer.value)

    def sample(self, device: int, kinds: Sequence[str] = ("live",), metrics: Sequence[Union[int, str]] = (),
               window_ms: int = 0) -> List[Reading]:
        """DEVICE-scope readings of the kinds asked ("identity", "static", "live", "pcie_throughput",
        "window"), or only of `metrics` (ids or names)."""
        what = 0
        for kind in kinds:
            if kind not in _capi.SAMPLE_FLAGS:
                raise InvalidArgument(_capi.ERROR_INVALID_ARGUMENT,
                                      f"unknown kind {kind!r} (one of {', '.join(_capi.SAMPLE_FLAGS)})")
            what |= _capi.SAMPLE_FLAGS[kind]
        ids = (ctypes.c_uint32 * len(metrics))(*[metric(m).id for m in metrics])
        options = _capi.SampleOptions(what=what, window_ms=window_ms, metrics=ids, metric_count=len(metrics))
        with self._list(_library().hipstack_smi_sample_device, device, ctypes.byref(options)) as readings:
            return readings.items(_reading)

    def query(self, metrics: Sequence[Union[int, str]]) -> "Query":
        """A prepared question for a poller: the values of these single-valued DEVICE-scope metrics."""
        return Query(self, metrics)

    def partitions(self, device: int) -> List[Partition]:
        with self._list(_library().hipstack_smi_get_partitions, device) as partitions:
            return partitions.items(lambda c: Partition(c.index, _text(c.id), _text(c.bdf), _readings(c.readings)))

    def processes(self, device: int, interval_ms: int = 0) -> List[Process]:
        with self._list(_library().hipstack_smi_get_processes, device, interval_ms) as processes:
            return processes.items(lambda c: Process(c.pid, _text(c.name), _text(c.user), _text(c.command_line),
                                                     _text(c.cgroup), _readings(c.readings)))

    def links(self) -> List[Link]:
        with self._list(_library().hipstack_smi_get_links) as links:
            return links.items(lambda c: Link(c.from_, c.to, _readings(c.readings)))

    def bad_pages(self, device: int) -> List[BadPage]:
        with self._list(_library().hipstack_smi_get_bad_pages, device) as pages:
            return pages.items(lambda c: BadPage(c.frame, c.size, _text(c.state)))

    def health(self, device: int, policy_file: Optional[str] = None, **policy) -> HealthReport:
        """The health checks (docs/health.md). policy_file: "key = value" thresholds; keyword
        arguments (thermal_margin=..., ...) override them."""
        lib = _library()
        c_policy = _capi.HealthPolicy()
        _check(lib.hipstack_smi_health_policy_init(ctypes.byref(c_policy)))
        if policy_file:
            _check(lib.hipstack_smi_health_policy_load(policy_file.encode(), ctypes.byref(c_policy)))
        for key, value in policy.items():
            if key == "struct_size" or not hasattr(c_policy, key):
                raise InvalidArgument(_capi.ERROR_INVALID_ARGUMENT, f"no health threshold named {key!r}")
            setattr(c_policy, key, value)
        overall = ctypes.c_int()
        handle = ctypes.c_void_p()
        _check(lib.hipstack_smi_check_health(self._handle, device, ctypes.byref(c_policy), ctypes.byref(overall),
                                             ctypes.byref(handle)))
        with _List(handle) as findings:
            items = findings.items(lambda c: HealthFinding(_text(c.check_name), _capi.VERDICT_NAMES[c.verdict],
                                                           _text(c.reading), _text(c.threshold), _text(c.message),
                                                           _text(c.remediation)))
        return HealthReport(device, _capi.VERDICT_NAMES[overall.value], items)

    def control(self, device: int, kind: str, text: str = "", value: float = 0.0, value2: float = 0.0,
                dry_run: bool = False, force: bool = False, settle_timeout_ms: int = 0) -> ControlResult:
        """A change through the library's one guarded path (docs/control.md): kind is one of
        compute_partition, memory_partition, power_cap, performance_level, power_profile,
        graphics_clock_range, memory_clock_range, fan, reset. A refusal is a result, not an exception."""
        if kind not in _capi.CONTROL_KINDS:
            raise InvalidArgument(_capi.ERROR_INVALID_ARGUMENT,
                                  f"unknown control {kind!r} (one of {', '.join(_capi.CONTROL_KINDS)})")
        lib = _library()
        flags = (_capi.CONTROL_DRY_RUN if dry_run else 0) | (_capi.CONTROL_FORCE if force else 0)
        request = _capi.ControlRequest(kind=_capi.CONTROL_KINDS[kind], flags=flags, text=text.encode(), value=value,
                                       value2=value2, settle_timeout_ms=settle_timeout_ms)
        result = _capi.ControlResult()
        handle = ctypes.c_void_p()
        _check(lib.hipstack_smi_control(self._handle, device, ctypes.byref(request), ctypes.byref(result),
                                        ctypes.byref(handle)))
        with _List(handle) as writes:
            # The result's strings live in the writes list: read them before it is freed.
            return ControlResult(_capi.OUTCOME_NAMES[result.outcome], _text(lib.hipstack_smi_reason_name(result.reason)),
                                 result.error_code, _text(result.action), _text(result.message),
                                 _text(result.next_step),
                                 writes.items(lambda c: ControlWrite(_text(c.path), _text(c.value), _text(c.host_path),
                                                                     bool(c.done), c.error_code)))


class EventWatch(_Owned):
    """Follows GPUs as `hipstack-smi event` does: subscribes now, then each poll() gives the events
    since the previous one (the first: what arrived since the subscription). Selectors: indices,
    BDFs or UUIDs (none: every GPU). Open options as for System."""

    def __init__(self, selectors: Sequence[str] = (), **open_options):
        lib = _library()
        options = _options(open_options.pop("sysfs_root", None), open_options.pop("procfs_root", None),
                           open_options.pop("devfs_root", None), open_options.pop("nvml_library", None),
                           open_options.pop("amdgpu", True), open_options.pop("nvml", True), False,
                           open_options.pop("read_deadline_ms", None))
        if open_options:
            raise InvalidArgument(_capi.ERROR_INVALID_ARGUMENT, f"unknown options: {', '.join(open_options)}")
        chosen = (ctypes.c_char_p * len(selectors))(*[s.encode() for s in selectors])
        self._handle = ctypes.c_void_p()
        _check(lib.hipstack_smi_event_watch_open(ctypes.byref(options), chosen, len(selectors), ctypes.byref(self._handle)))

    def poll(self) -> List[Event]:
        handle = ctypes.c_void_p()
        _check(_library().hipstack_smi_event_watch_poll(self._handle, ctypes.byref(handle)))
        with _List(handle) as events:
            return events.items(lambda c: Event(_text(c.kind), c.device, _text(c.bdf), _text(c.uuid), _text(c.metric),
                                                _text(c.before), _text(c.after), _text(c.message)))

    _closer = "hipstack_smi_event_watch_close"
