"""pynvml's structures, with NVML's field names and layouts (nvml.h), as ctypes structures so that
clients which fill them through pointers (docs/pynvml-clients.md, "raw-pointer protocol") and
clients which read their fields both work; text fields read as str."""
import ctypes

__all__ = [
    "struct_c_nvmlDevice_t", "c_nvmlDevice_t", "nvmlFriendlyObject", "nvmlStructToFriendlyObject",
    "nvmlFriendlyObjectToStruct", "c_nvmlMemory_t", "c_nvmlMemory_v2_t", "nvmlMemory_v2", "c_nvmlBAR1Memory_t",
    "c_nvmlUtilization_t", "c_nvmlProcessInfo_v1_t", "c_nvmlProcessInfo_v2_t", "c_nvmlProcessInfo_v3_t",
    "c_nvmlProcessInfo_t", "nvmlPciInfo_t", "c_nvmlPciInfo_t", "c_nvmlProcessUtilizationSample_t", "c_nvmlValue_t",
    "c_nvmlFieldValue_t",
]


class _PrintableStructure(ctypes.Structure):
    """A structure whose text fields read as str and whose str() lists its fields."""
    _fmt_ = {}

    def __getattribute__(self, name):
        value = super().__getattribute__(name)
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else value

    def __setattr__(self, name, value):
        super().__setattr__(name, value.encode() if isinstance(value, str) else value)

    def __str__(self):
        parts = []
        for field in self._fields_:
            name = field[0]
            fmt = self._fmt_.get(name, self._fmt_.get("<default>", "%s"))
            parts.append(("%s: " + fmt) % (name, getattr(self, name)))
        return "%s(%s)" % (type(self).__name__, ", ".join(parts))


class struct_c_nvmlDevice_t(ctypes.Structure):  # noqa: N801 (NVML's names)
    pass  # opaque


c_nvmlDevice_t = ctypes.POINTER(struct_c_nvmlDevice_t)


class nvmlFriendlyObject:  # noqa: N801
    """A structure's fields as plain, settable attributes."""

    def __init__(self, fields):
        for name, value in fields.items():
            setattr(self, name, value.decode("utf-8", "replace") if isinstance(value, bytes) else value)

    def __str__(self):
        return str(self.__dict__)


def nvmlStructToFriendlyObject(struct):  # noqa: N802
    return nvmlFriendlyObject({field[0]: getattr(struct, field[0]) for field in struct._fields_})


def nvmlFriendlyObjectToStruct(obj, model):  # noqa: N802
    for field in model._fields_:
        setattr(model, field[0], getattr(obj, field[0]))
    return model


class c_nvmlMemory_t(_PrintableStructure):  # noqa: N801
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]
    _fmt_ = {"<default>": "%d B"}


class c_nvmlMemory_v2_t(_PrintableStructure):  # noqa: N801
    _fields_ = [("version", ctypes.c_uint), ("total", ctypes.c_ulonglong), ("reserved", ctypes.c_ulonglong),
                ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]
    _fmt_ = {"<default>": "%d B"}


# NVML's versioned-structure tag: the size, with the version in the top byte.
nvmlMemory_v2 = ctypes.sizeof(c_nvmlMemory_v2_t) | 2 << 24


class c_nvmlBAR1Memory_t(_PrintableStructure):  # noqa: N801
    _fields_ = [("bar1Total", ctypes.c_ulonglong), ("bar1Free", ctypes.c_ulonglong), ("bar1Used", ctypes.c_ulonglong)]
    _fmt_ = {"<default>": "%d B"}


class c_nvmlUtilization_t(_PrintableStructure):  # noqa: N801
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]
    _fmt_ = {"<default>": "%d %%"}


class c_nvmlProcessInfo_v1_t(_PrintableStructure):  # noqa: N801
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong)]


class c_nvmlProcessInfo_v2_t(_PrintableStructure):  # noqa: N801
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong), ("gpuInstanceId", ctypes.c_uint),
                ("computeInstanceId", ctypes.c_uint)]


class c_nvmlProcessInfo_v3_t(_PrintableStructure):  # noqa: N801
    _fields_ = c_nvmlProcessInfo_v2_t._fields_ + [("usedGpuCcProtectedMemory", ctypes.c_ulonglong)]


c_nvmlProcessInfo_t = c_nvmlProcessInfo_v2_t


class nvmlPciInfo_t(_PrintableStructure):  # noqa: N801
    _fields_ = [("busIdLegacy", ctypes.c_char * 16), ("domain", ctypes.c_uint), ("bus", ctypes.c_uint),
                ("device", ctypes.c_uint), ("pciDeviceId", ctypes.c_uint), ("pciSubSystemId", ctypes.c_uint),
                ("busId", ctypes.c_char * 32)]
    _fmt_ = {"domain": "0x%08X", "bus": "0x%02X", "device": "0x%02X", "pciDeviceId": "0x%08X",
             "pciSubSystemId": "0x%08X"}


c_nvmlPciInfo_t = nvmlPciInfo_t


class c_nvmlProcessUtilizationSample_t(_PrintableStructure):  # noqa: N801
    _fields_ = [("pid", ctypes.c_uint), ("timeStamp", ctypes.c_ulonglong), ("smUtil", ctypes.c_uint),
                ("memUtil", ctypes.c_uint), ("encUtil", ctypes.c_uint), ("decUtil", ctypes.c_uint)]


class c_nvmlValue_t(ctypes.Union):  # noqa: N801
    _fields_ = [("dVal", ctypes.c_double), ("uiVal", ctypes.c_uint), ("ulVal", ctypes.c_ulong),
                ("ullVal", ctypes.c_ulonglong), ("sllVal", ctypes.c_longlong), ("siVal", ctypes.c_int)]


class c_nvmlFieldValue_t(_PrintableStructure):  # noqa: N801
    _fields_ = [("fieldId", ctypes.c_uint32), ("scopeId", ctypes.c_uint32), ("timestamp", ctypes.c_int64),
                ("latencyUsec", ctypes.c_int64), ("valueType", ctypes.c_uint), ("nvmlReturn", ctypes.c_uint),
                ("value", c_nvmlValue_t)]
