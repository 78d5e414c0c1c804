"""amdsmi's status codes, exceptions and enums (amdsmi.h and the Python interface of ROCm 7.x, with
the values ROCm 6.x shares; docs/python.md, "hipstack.amdsmi"). Facts carried over: names and
numbers, so that scripts comparing against them keep working."""
from enum import IntEnum
from typing import Optional

# amdsmi_status_t (amdsmi.h): every code, by number.
AMDSMI_STATUS_SUCCESS = 0
AMDSMI_STATUS_INVAL = 1
AMDSMI_STATUS_NOT_SUPPORTED = 2
AMDSMI_STATUS_NOT_YET_IMPLEMENTED = 3
AMDSMI_STATUS_API_FAILED = 7
AMDSMI_STATUS_TIMEOUT = 8
AMDSMI_STATUS_RETRY = 9
AMDSMI_STATUS_NO_PERM = 10
AMDSMI_STATUS_IO = 12
AMDSMI_STATUS_BUSY = 30
AMDSMI_STATUS_NOT_FOUND = 31
AMDSMI_STATUS_NOT_INIT = 32
AMDSMI_STATUS_DRIVER_NOT_LOADED = 34
AMDSMI_STATUS_NO_DATA = 40
AMDSMI_STATUS_UNEXPECTED_DATA = 43  # amdsmi.h: "the data read ... is not what was expected"
AMDSMI_STATUS_UNKNOWN_ERROR = 0xFFFFFFFF
_STATUS_TEXT = {AMDSMI_STATUS_INVAL: "AMDSMI_STATUS_INVAL - Invalid parameters",
                AMDSMI_STATUS_NOT_SUPPORTED: "AMDSMI_STATUS_NOT_SUPPORTED - Feature not supported",
                AMDSMI_STATUS_NOT_YET_IMPLEMENTED: "AMDSMI_STATUS_NOT_YET_IMPLEMENTED - Feature not yet implemented",
                AMDSMI_STATUS_API_FAILED: "AMDSMI_STATUS_API_FAILED - API call failed",
                AMDSMI_STATUS_TIMEOUT: "AMDSMI_STATUS_TIMEOUT - Timeout in API call",
                AMDSMI_STATUS_NOT_FOUND: "AMDSMI_STATUS_NOT_FOUND - Device Not found",
                AMDSMI_STATUS_NOT_INIT: "AMDSMI_STATUS_NOT_INIT - Device not initialized",
                AMDSMI_STATUS_NO_DATA: "AMDSMI_STATUS_NO_DATA - No data was found for a given input",
                AMDSMI_STATUS_UNEXPECTED_DATA: "AMDSMI_STATUS_UNEXPECTED_DATA - The data read or provided was unexpected",
                AMDSMI_STATUS_UNKNOWN_ERROR: "AMDSMI_STATUS_UNKNOWN_ERROR - An unknown error occurred"}


class AmdSmiException(Exception):
    pass


class AmdSmiLibraryException(AmdSmiException):
    def __init__(self, err_code: int, detail: str = ""):
        super().__init__(err_code)
        self.err_code = abs(err_code)
        self.err_info = _STATUS_TEXT.get(self.err_code, _STATUS_TEXT[AMDSMI_STATUS_UNKNOWN_ERROR])
        self.detail = detail  # hipstack's: the metric and why

    def get_error_code(self) -> int:
        return self.err_code

    def get_error_info(self, detailed: bool = True) -> str:
        return f"{self.err_info}: {self.detail}" if detailed and self.detail else self.err_info

    def __str__(self):
        return f"Error code:\n\t{self.err_code} | {self.get_error_info()}"


class AmdSmiTimeoutException(AmdSmiLibraryException):
    """A read that did not return in the library's deadline (amdsmi's class for AMDSMI_STATUS_TIMEOUT)."""

    def __init__(self, detail: str = ""):
        super().__init__(AMDSMI_STATUS_TIMEOUT, detail)


class AmdSmiParameterException(AmdSmiException):
    def __init__(self, receivedValue, expectedType, msg: Optional[str] = None):  # noqa: N803 (amdsmi's names)
        super().__init__(msg or f"expected {expectedType}, got {receivedValue!r}")
        self.actualType = type(receivedValue)  # noqa: N815
        self.expectedType = expectedType  # noqa: N815
        self.err_msg = msg
        self.err_code = None


class AmdSmiBdfFormatException(AmdSmiException):
    """A BDF string that is not "dddd:bb:dd.f" or "bb:dd.f" (amdsmi_get_processor_handle_from_bdf)."""

    def __init__(self, bdf):
        super().__init__(f"bdf {bdf!r} is not dddd:bb:dd.f or bb:dd.f")
        self.bdf = bdf


class AmdSmiInitFlags(IntEnum):
    INIT_ALL_PROCESSORS = 0xFFFFFFFF
    INIT_AMD_CPUS = 1
    INIT_AMD_GPUS = 2
    INIT_AMD_APUS = 3
    INIT_NON_AMD_CPUS = 4
    INIT_NON_AMD_GPUS = 8


class AmdSmiTemperatureType(IntEnum):
    EDGE = 0
    HOTSPOT = 1
    JUNCTION = 1
    VRAM = 2
    HBM_0 = 3
    HBM_1 = 4
    HBM_2 = 5
    HBM_3 = 6
    PLX = 7


class AmdSmiTemperatureMetric(IntEnum):
    CURRENT = 0
    MAX = 1
    MIN = 2
    MAX_HYST = 3
    MIN_HYST = 4
    CRITICAL = 5
    CRITICAL_HYST = 6
    EMERGENCY = 7
    EMERGENCY_HYST = 8
    CRIT_MIN = 9
    CRIT_MIN_HYST = 10
    OFFSET = 11
    LOWEST = 12
    HIGHEST = 13


class AmdSmiMemoryType(IntEnum):
    VRAM = 0
    VIS_VRAM = 1
    GTT = 2


class AmdSmiClkType(IntEnum):
    SYS = 0
    GFX = 0  # the same clock: an alias of SYS, as in amdsmi
    DF = 1
    DCEF = 2
    SOC = 3
    MEM = 4
    PCIE = 5
    VCLK0 = 6
    VCLK1 = 7
    DCLK0 = 8
    DCLK1 = 9


class AmdSmiGpuBlock(IntEnum):
    INVALID = 0
    UMC = 1
    SDMA = 2
    GFX = 4
    MMHUB = 8
    ATHUB = 16
    PCIE_BIF = 32
    HDP = 64
    XGMI_WAFL = 128
    DF = 256
    SMN = 512
    SEM = 1024
    MP0 = 2048
    MP1 = 4096
    FUSE = 8192
    MCA = 16384
    VCN = 32768
    JPEG = 65536
    IH = 131072
    MPIO = 262144
    RESERVED = 1 << 63


class AmdSmiDevPerfLevel(IntEnum):
    AUTO = 0
    LOW = 1
    HIGH = 2
    MANUAL = 3
    STABLE_STD = 4
    STABLE_PEAK = 5
    STABLE_MIN_MCLK = 6
    STABLE_MIN_SCLK = 7
    DETERMINISM = 8
    UNKNOWN = 0x100


class AmdSmiComputePartitionType(IntEnum):
    """ROCm 7.x's numbers (6.x numbered them otherwise: compare names, as amdsmi advises)."""
    INVALID = 0
    SPX = 1
    DPX = 2
    TPX = 3
    QPX = 4
    CPX = 5


class AmdSmiMemoryPartitionType(IntEnum):
    """ROCm 7.x's numbers (6.x numbered NPS4 3 and NPS8 4)."""
    UNKNOWN = 0
    NPS1 = 1
    NPS2 = 2
    NPS4 = 4
    NPS8 = 8


class AmdSmiLinkType(IntEnum):
    """ROCm 7.x's (amdsmi_topo_get_link_type's "type"; 0, 1, 2 mean the same in 6.x)."""
    AMDSMI_LINK_TYPE_INTERNAL = 0
    AMDSMI_LINK_TYPE_PCIE = 1
    AMDSMI_LINK_TYPE_XGMI = 2
    AMDSMI_LINK_TYPE_NOT_APPLICABLE = 3
    AMDSMI_LINK_TYPE_UNKNOWN = 4


class AmdSmiMemoryPageStatus(IntEnum):
    RESERVED = 0
    PENDING = 1
    UNRESERVABLE = 2


class AmdSmiFwBlock(IntEnum):
    """The firmware blocks amdgpu's fw_version files name (amdsmi.h's numbers, the same in 6.x and 7.x
    up to 38; the later ones are 7.x's)."""
    AMDSMI_FW_ID_SMU = 1
    AMDSMI_FW_ID_CP_CE = 2
    AMDSMI_FW_ID_CP_PFP = 3
    AMDSMI_FW_ID_CP_ME = 4
    AMDSMI_FW_ID_CP_MEC_JT1 = 5
    AMDSMI_FW_ID_CP_MEC_JT2 = 6
    AMDSMI_FW_ID_CP_MEC1 = 7
    AMDSMI_FW_ID_CP_MEC2 = 8
    AMDSMI_FW_ID_RLC = 9
    AMDSMI_FW_ID_SDMA0 = 10
    AMDSMI_FW_ID_SDMA1 = 11
    AMDSMI_FW_ID_SDMA2 = 12
    AMDSMI_FW_ID_SDMA3 = 13
    AMDSMI_FW_ID_SDMA4 = 14
    AMDSMI_FW_ID_SDMA5 = 15
    AMDSMI_FW_ID_SDMA6 = 16
    AMDSMI_FW_ID_SDMA7 = 17
    AMDSMI_FW_ID_VCN = 18
    AMDSMI_FW_ID_UVD = 19
    AMDSMI_FW_ID_VCE = 20
    AMDSMI_FW_ID_ISP = 21
    AMDSMI_FW_ID_DMCU_ERAM = 22
    AMDSMI_FW_ID_DMCU_ISR = 23
    AMDSMI_FW_ID_RLC_RESTORE_LIST_GPM_MEM = 24
    AMDSMI_FW_ID_RLC_RESTORE_LIST_SRM_MEM = 25
    AMDSMI_FW_ID_RLC_RESTORE_LIST_CNTL = 26
    AMDSMI_FW_ID_RLC_V = 27
    AMDSMI_FW_ID_MMSCH = 28
    AMDSMI_FW_ID_PSP_SYSDRV = 29
    AMDSMI_FW_ID_PSP_SOSDRV = 30
    AMDSMI_FW_ID_PSP_TOC = 31
    AMDSMI_FW_ID_PSP_KEYDB = 32
    AMDSMI_FW_ID_DFC = 33
    AMDSMI_FW_ID_PSP_SPL = 34
    AMDSMI_FW_ID_DRV_CAP = 35
    AMDSMI_FW_ID_MC = 36
    AMDSMI_FW_ID_PSP_BL = 37
    AMDSMI_FW_ID_CP_PM4 = 38
    AMDSMI_FW_ID_IMU_DRAM = 42
    AMDSMI_FW_ID_ASD = 72
    AMDSMI_FW_ID_TA_RAS = 73
    AMDSMI_FW_ID_TA_XGMI = 74
    AMDSMI_FW_ID_RLC_SRLG = 75
    AMDSMI_FW_ID_RLC_SRLS = 76
    AMDSMI_FW_ID_PM = 77
    AMDSMI_FW_ID_DMCU = 78
