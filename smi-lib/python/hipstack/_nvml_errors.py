"""NVML's return codes and pynvml's exception classes, as clients of pynvml rely on them
(docs/pynvml-clients.md): NVMLError(code) gives the subclass for the code, each subclass can be
raised without an argument, NVMLError._errcode_to_string maps every code to its text, and
nvmlExceptionClass(code) gives the class. The codes are NVML's (nvml.h)."""
import string

# (code, constant suffix, text) for every NVML return code.
_CODES = (
    (1, "UNINITIALIZED", "Uninitialized"),
    (2, "INVALID_ARGUMENT", "Invalid Argument"),
    (3, "NOT_SUPPORTED", "Not Supported"),
    (4, "NO_PERMISSION", "Insufficient Permissions"),
    (5, "ALREADY_INITIALIZED", "Already Initialized"),
    (6, "NOT_FOUND", "Not Found"),
    (7, "INSUFFICIENT_SIZE", "Insufficient Size"),
    (8, "INSUFFICIENT_POWER", "Insufficient External Power"),
    (9, "DRIVER_NOT_LOADED", "Driver Not Loaded"),
    (10, "TIMEOUT", "Timeout"),
    (11, "IRQ_ISSUE", "Interrupt Request Issue"),
    (12, "LIBRARY_NOT_FOUND", "NVML Shared Library Not Found"),
    (13, "FUNCTION_NOT_FOUND", "Function Not Found"),
    (14, "CORRUPTED_INFOROM", "Corrupted infoROM"),
    (15, "GPU_IS_LOST", "GPU is lost"),
    (16, "RESET_REQUIRED", "GPU requires restart"),
    (17, "OPERATING_SYSTEM", "The operating system has blocked the request."),
    (18, "LIB_RM_VERSION_MISMATCH", "RM has detected an NVML/RM version mismatch."),
    (19, "IN_USE", "In use by another client"),
    (20, "MEMORY", "Insufficient Memory"),
    (21, "NO_DATA", "No data"),
    (22, "VGPU_ECC_NOT_SUPPORTED", "The requested vgpu operation is not available because ECC is enabled"),
    (23, "INSUFFICIENT_RESOURCES", "Insufficient resources"),
    (24, "FREQ_NOT_SUPPORTED", "Frequency not supported"),
    (25, "ARGUMENT_VERSION_MISMATCH", "The provided version is invalid/unsupported"),
    (26, "DEPRECATED", "The requested functionality has been deprecated"),
    (27, "NOT_READY", "The system is not ready for the request"),
    (28, "GPU_NOT_FOUND", "The GPU was not found"),
    (29, "INVALID_STATE", "The resource is in an invalid state"),
    (999, "UNKNOWN", "Unknown Error"),
)

NVML_SUCCESS = 0
for _code, _suffix, _ in _CODES:
    globals()["NVML_ERROR_" + _suffix] = _code


class NVMLError(Exception):
    """An NVML return code as an exception: `value` is the code. NVMLError(code) is an instance of the
    code's subclass (NVMLError_NotSupported for 3); a subclass raised bare carries its own code.
    hipstack adds `detail`: what failed and where."""
    _errcode_to_string = {code: text for code, _, text in _CODES}
    _subclasses = {}

    def __new__(typ, value=None, detail=""):
        if typ is NVMLError:
            typ = NVMLError._subclasses.get(value, NVMLError)
        error = Exception.__new__(typ)
        error.value = value if value is not None else getattr(typ, "_code", None)
        error.detail = detail
        return error

    def __init__(self, value=None, detail=""):
        super().__init__(self.value)
        self.detail = detail

    def __str__(self):
        text = NVMLError._errcode_to_string.get(self.value, "NVML Error with code %s" % self.value)
        return "%s: %s" % (text, self.detail) if self.detail else text

    def __eq__(self, other):
        return isinstance(other, NVMLError) and self.value == other.value

    __hash__ = Exception.__hash__


def _class_name(suffix: str) -> str:
    return "NVMLError_" + string.capwords(suffix.replace("_", " ")).replace(" ", "")


for _code, _suffix, _ in _CODES:
    _cls = type(_class_name(_suffix), (NVMLError,), {"_code": _code})
    NVMLError._subclasses[_code] = _cls
    globals()[_cls.__name__] = _cls
del _code, _suffix, _cls


def nvmlExceptionClass(code):  # noqa: N802 (pynvml's name)
    """The exception class of an NVML return code."""
    if code not in NVMLError._subclasses:
        raise ValueError("nvmlErrorCode %s is not valid" % code)
    return NVMLError._subclasses[code]


def nvmlErrorString(code) -> str:  # noqa: N802
    return NVMLError._errcode_to_string.get(code, "Unknown Error")


def _nvmlCheckReturn(ret):  # noqa: N802
    """A C-style return code: raised as its NVMLError unless it is NVML_SUCCESS."""
    if ret != NVML_SUCCESS:
        raise NVMLError(ret)
    return ret


class NVMLLibraryMismatchError(Exception):
    pass


__all__ = [name for name in list(globals()) if name.startswith(("NVML", "nvml"))]
