#!/usr/bin/env python3
"""Generate CONSTRUCTED (not recorded) sysfs/procfs captures of an 8x AMD Instinct MI300X node.

No real recording of an MI300X drm/cardN/device folder exists, so this script builds two captures
from documented facts (see captures/constructed/README.md for every fact and its source):

  <out>/mi300x-8gpu-spx-nps1/   8 GPUs, SPX compute mode, NPS1 memory mode
  <out>/mi300x-8gpu-cpx-nps1/   the same node in CPX mode (8 partitions per GPU, 64 GPU KFD nodes)
  <out>/README.md               what is constructed and where each fact comes from

Each capture holds sys/ (and proc/) laid out like the real captures in captures/real/ (flat
folders, no symlinks), a README.md, and expected.json: the values a correct reader must report,
derived from the same Python values that write the files.

Usage (Python 3 standard library only, deterministic output):
  python3 captures/tools/make_mi300x.py captures/constructed          # (re)generate
  python3 captures/tools/make_mi300x.py --check captures/constructed  # re-read files, compare
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import struct
import sys

SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))
REAL_CPX = os.path.join(SCRIPT_DIR, "..", "real", "k8s-device-plugin", "topo-mi300-cpx",
                        "sys", "class", "kfd", "kfd", "topology")

SPX = "mi300x-8gpu-spx-nps1"
CPX = "mi300x-8gpu-cpx-nps1"

# --------------------------------------------------------------------------------------------
# Facts.  Source tags (explained in README.md):
#   [CPX]  captures/real/k8s-device-plugin/topo-mi300-cpx (real MI300X CPX KFD topology)
#   [SMI]  captures/real/_aux/thamada-nvidia-smi-MI300X (real rocm-smi / rocminfo text, 4x MI300X)
#   [KRN]  Linux amdgpu/amdkfd source (amdgpu_pm.c, smu_v13_0_6_ppt.c, kfd_crat.c, kfd_topology.c,
#          kfd_process.c, amdgpu_xcp.c, amdgpu_fdinfo.c), reference/NOTES.md, gpu_metrics_structs.h
#   [MADE] invented for this capture (plausible, not documented anywhere)
# --------------------------------------------------------------------------------------------
NUM_GPUS = 8
NUM_XCC = 8                       # [KRN]/[CPX] MI300X: 8 XCDs; CPX = 1 XCC per partition
BUSES = [0x05, 0x27, 0x47, 0x65, 0x85, 0xA7, 0xC7, 0xE5]   # [CPX] location_id >> 8
UNIQUE_IDS = [                    # [CPX] KFD unique_id per GPU (decimal), shared by its partitions
    16404946649897475633, 2472748907779728154, 15565237874008425757, 12035684874187068538,
    15304831566906821053, 13644590235195043050, 13326531576914550249, 15931900197903628278]
HIVE_ID = 15188982192727901047    # [CPX] hive_id
CPX_SIMD_ID_BASE0 = 2147488064    # [CPX] simd_id_base of node 2, +40 per partition node
SPX_SIMD_ID_BASE0 = 0x80001000    # [KRN] first gpu_processor_id_low (lact/phoenix shows it too)
PCI_VENDOR, PCI_DEVICE = 0x1002, 0x74A1           # [SMI] Device ID 0x74a1, rev 0x00
PCI_SUBSYS = (0x1002, 0x74A1)                     # brief: subsystem 0x1002:0x74a1
PCI_REVISION = 0x00                               # [SMI] "Device Rev: 0x0"
PCI_CLASS = 0x120000                              # processing accelerator
VRAM_TOTAL = 206141652992         # [SMI] rocminfo pool 201310208 KB = 192 GiB - 16 MiB
VRAM_PER_CPX_PARTITION = VRAM_TOTAL // 8          # [KRN] KFD_XCP_MEMORY_SIZE / xcp per mem partition
GTT_TOTAL = 1217374353408         # [MADE] half of system RAM (RAM sizes from [SMI] rocminfo)
CPU_NODE_MEM = [1217259188224, 1217489518592]     # [SMI] rocminfo CPU pools 1188729676 / 1188954608 KB
VBIOS = "113-MI3SRIOV-001"        # [SMI]
PRODUCT_NAME = "AMD Instinct MI300X OAM"          # [SMI] "Card series"
PRODUCT_NUMBER = "102-G30211-0C"  # [MADE]
MANUFACTURER = "AMD"              # [MADE]
FRU_ID = "0x0C"                   # [MADE]
VRAM_VENDOR = "samsung"           # [SMI]
SERIALS = ["692347006052", "692347005894", "692347006047", "692347005902",   # [SMI]
           "692347006011", "692347005937", "692347006069", "692347005918"]  # [MADE]
POWER_CAP_W = 750                 # [SMI] "Max Graphics Package Power (W): 750.0"
SCLK_MIN, SCLK_MAX = 500, 2100    # [SMI] pp_dpm_sclk lines "0: 500Mhz" / "2100Mhz"
MCLK_LEVELS = [900, 1100, 1300]   # [SMI]
FCLK_LEVELS = [1300, 1550, 1800]  # [SMI]
SOCCLK_LEVELS = [889, 1000, 1143] # [SMI]
VCLK_LEVELS = [914, 1067, 1333]   # [MADE]
DCLK_LEVELS = [711, 914, 1143]    # [MADE]
DSCLK_THRESHOLD = 140             # [KRN] SMU_13_0_6_DSCLK_THRESHOLD (100 in the first version)
TEMP_JUNC_CRIT, TEMP_JUNC_EMERG = 100, 110        # [MADE] (firmware GetCTFLimit values unknown)
TEMP_MEM_CRIT, TEMP_MEM_EMERG = 95, 105           # [MADE]
# fw_version/<ip>_fw_version: names as in the real lact/rx6900xt capture; values [SMI] except
# mec/sdma which follow the real CPX KFD fw_version 177 / sdma_fw_version 24 [CPX].
FIRMWARE = [("asd", 0), ("ce", 0), ("dmcu", 0), ("imu", 0), ("mc", 0), ("me", 0),
            ("mec2", 177), ("mec", 177), ("pfp", 0), ("rlc", 63), ("rlc_srlc", 0),
            ("rlc_srlg", 0), ("rlc_srls", 0), ("sdma2", 24), ("sdma", 24),
            ("smc", 0x00555B00), ("sos", 0x0036024B), ("ta_ras", 0x2000000C),
            ("ta_xgmi", 0x20000113), ("uvd", 0), ("vce", 0), ("vcn", 0x0611300C)]
CPU_CPULISTS = ["0-47,96-143", "48-95,144-191"]   # [MADE] 2x 48-core/96-thread EPYC
REC_SDMA_ENG_MAP = [                              # [KRN] kfd_topology.c rec_sdma_eng_map
    [-1, 14, 12, 2, 4, 8, 10, 6], [14, -1, 2, 10, 8, 4, 6, 12],
    [10, 2, -1, 12, 14, 6, 4, 8], [2, 12, 10, -1, 6, 14, 8, 4],
    [4, 8, 14, 6, -1, 10, 12, 2], [8, 4, 6, 14, 12, -1, 2, 10],
    [10, 6, 4, 8, 12, 2, -1, 14], [6, 12, 8, 4, 2, 10, 14, -1]]
KFD_QUEUE_TYPES = {0: "compute", 1: "sdma", 2: "hiq", 3: "diq", 4: "sdma_xgmi"}   # [KRN]

# Live values per GPU ([SMI] for GPUs 0-3: junction/memory temperature and socket power of the
# real 4x MI300X rocm-smi; GPUs 4-7 [MADE] under load).  sclk: ("S", mhz) deep sleep,
# ("mid", mhz) between min and max (3-line form), ("max", mhz) at max (2-line form).
GPUS = [
    dict(tj=35, tm=33, tvr=31, power=133, sclk=("mid", 142), mclk=900, fclk=1300, socclk=30,
         vclk=29, dclk=27, mem_busy=0, perf="auto", cap=750, replay=0, vram_base=297611264),
    dict(tj=37, tm=34, tvr=32, power=130, sclk=("S", 133), mclk=900, fclk=1300, socclk=30,
         vclk=29, dclk=27, mem_busy=0, perf="auto", cap=750, replay=0, vram_base=297623552),
    dict(tj=34, tm=32, tvr=30, power=131, sclk=("mid", 146), mclk=900, fclk=1300, socclk=30,
         vclk=29, dclk=27, mem_busy=0, perf="auto", cap=750, replay=0, vram_base=297635840),
    dict(tj=39, tm=36, tvr=33, power=136, sclk=("S", 132), mclk=900, fclk=1300, socclk=30,
         vclk=29, dclk=27, mem_busy=0, perf="auto", cap=750, replay=0, vram_base=297648128),
    dict(tj=58, tm=49, tvr=47, power=412, sclk=("max", 2100), mclk=1300, fclk=1800, socclk=1143,
         vclk=914, dclk=711, mem_busy=38, perf="auto", cap=750, replay=0, vram_base=297660416),
    dict(tj=62, tm=52, tvr=49, power=538, sclk=("mid", 1923), mclk=1300, fclk=1800, socclk=1143,
         vclk=29, dclk=27, mem_busy=41, perf="auto", cap=750, replay=0, vram_base=297672704),
    dict(tj=47, tm=44, tvr=41, power=265, sclk=("mid", 1488), mclk=1100, fclk=1550, socclk=1000,
         vclk=29, dclk=27, mem_busy=12, perf="manual", cap=600, replay=3, vram_base=297684992),
    dict(tj=71, tm=60, tvr=55, power=701, sclk=("mid", 2087), mclk=1300, fclk=1800, socclk=1143,
         vclk=29, dclk=27, mem_busy=61, perf="perf_determinism", cap=750, replay=0,
         vram_base=297697280),
]
GTT_BASE = 5 * 1024 * 1024        # [MADE] driver-owned GTT per GPU
UPTIME_S = 691234                 # [MADE] ~8 days

# Processes [MADE].  Each attachment: gpu, partition (CPX only), vram/gtt in MiB, engine ns,
# sdma counter, cu_occupancy, queues [(type, size)], fds [(fd, client_id)].
PROCS = [
    dict(pid=48213, comm="python3", uid=1000, ppid=48200,
         cmdline=["python3", "-u", "train.py", "--config", "configs/llama3-70b.yaml",
                  "--local_rank", "0"], pasid=32771,
         spx=[dict(gpu=4, vram=148736, gtt=512, compute=8412337120559, dma=61228110031,
                   sdma=88213, cu=280, queues=[(0, 262144), (0, 262144), (4, 1048576)],
                   fds=[(9, 1181), (15, 1181)])],
         cpx=[dict(gpu=4, part=0, vram=20480, gtt=512, compute=1051542140069, dma=7653513753,
                   sdma=11026, cu=36, queues=[(0, 262144), (1, 1048576)],
                   fds=[(9, 1181), (15, 1181)])]),
    dict(pid=48214, comm="python3", uid=1000, ppid=48200,
         cmdline=["python3", "-u", "train.py", "--config", "configs/llama3-70b.yaml",
                  "--local_rank", "1"], pasid=32772,
         spx=[dict(gpu=5, vram=150528, gtt=512, compute=8399210457712, dma=60110274113,
                   sdma=87960, cu=296, queues=[(0, 262144), (0, 262144), (4, 1048576)],
                   fds=[(9, 1190)])],
         cpx=[dict(gpu=4, part=1, vram=21504, gtt=512, compute=1049901307214, dma=7513784264,
                   sdma=10995, cu=37, queues=[(0, 262144), (1, 1048576)],
                   fds=[(9, 1190)])]),
    dict(pid=51007, comm="python3", uid=1000, ppid=50991,
         cmdline=["python3", "-m", "vllm.entrypoints.openai.api_server", "--model",
                  "/models/Llama-3.1-405B-Instruct-FP8", "--tensor-parallel-size", "1"],
         cmdline_cpx=["python3", "-m", "vllm.entrypoints.openai.api_server", "--model",
                      "/models/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "4"],
         pasid=32775,
         spx=[dict(gpu=7, vram=183040, gtt=1024, compute=3620118441906, dma=9120344017,
                   sdma=20417, cu=304, queues=[(0, 1048576), (0, 1048576), (0, 1048576),
                                               (4, 1048576)], fds=[(11, 1402)])],
         cpx=[dict(gpu=7, part=p, vram=22528, gtt=256, compute=452514805238 + 1000003 * p,
                   dma=1140043002 + 7 * p, sdma=2552 + p, cu=38 - (p % 2),
                   queues=[(0, 1048576), (1, 1048576)], fds=[(11 + p, 1402 + p)])
              for p in range(4)]),
    dict(pid=52890, comm="all_reduce_perf", uid=1001, ppid=52801,
         cmdline=["/opt/rccl-tests/build/all_reduce_perf", "-b", "8", "-e", "8G", "-f", "2",
                  "-g", "2"], pasid=32777,
         spx=[dict(gpu=6, vram=17408, gtt=256, compute=912554021877, dma=331098650123,
                   sdma=910244, cu=152, queues=[(0, 262144), (4, 1048576), (4, 1048576)],
                   fds=[(7, 1630)]),
              dict(gpu=7, vram=17408, gtt=256, compute=910871244190, dma=329981127056,
                   sdma=908872, cu=150, queues=[(0, 262144), (4, 1048576), (4, 1048576)],
                   fds=[(8, 1631)])],
         cpx=[dict(gpu=6, part=0, vram=4096, gtt=256, compute=114069252734, dma=41387331265,
                   sdma=113780, cu=19, queues=[(0, 262144), (1, 1048576)], fds=[(7, 1630)]),
              dict(gpu=5, part=7, vram=4096, gtt=256, compute=113858905523, dma=41247640882,
                   sdma=113609, cu=19, queues=[(0, 262144), (1, 1048576)], fds=[(8, 1631)])]),
    # a monitor that opened render nodes but allocated nothing: fdinfo only, no KFD process
    dict(pid=60011, comm="amdgpu_top", uid=0, ppid=1,
         cmdline=["amdgpu_top", "--json", "-s", "1000"], pasid=None,
         spx=[dict(gpu=0, vram=0, gtt=0, fds=[(5, 2044)]), dict(gpu=1, vram=0, gtt=0, fds=[(6, 2045)])],
         cpx=[dict(gpu=0, part=0, vram=0, gtt=0, fds=[(5, 2044)]),
              dict(gpu=1, part=0, vram=0, gtt=0, fds=[(6, 2045)])]),
]
FDINFO_EXTRA_VRAM_KIB = 4096      # [MADE] page tables etc. counted by fdinfo, not by KFD vram_

# Real CPX GPU-node property keys, in file order [CPX] (checked against the real capture).
GPU_PROP_KEYS = [
    "cpu_cores_count", "simd_count", "mem_banks_count", "caches_count", "io_links_count",
    "p2p_links_count", "cpu_core_id_base", "simd_id_base", "max_waves_per_simd", "lds_size_in_kb",
    "gds_size_in_kb", "num_gws", "wave_front_size", "array_count", "simd_arrays_per_engine",
    "cu_per_simd_array", "simd_per_cu", "max_slots_scratch_cu", "gfx_target_version", "vendor_id",
    "device_id", "location_id", "domain", "drm_render_minor", "hive_id", "num_sdma_engines",
    "num_sdma_xgmi_engines", "num_sdma_queues_per_engine", "num_cp_queues",
    "max_engine_clk_fcompute", "local_mem_size", "fw_version", "capability", "debug_prop",
    "sdma_fw_version", "unique_id", "num_xcc", "max_engine_clk_ccompute"]
CPU_PROP_KEYS = GPU_PROP_KEYS[:GPU_PROP_KEYS.index("num_cp_queues") + 1] + ["max_engine_clk_ccompute"]
IOLINK_KEYS = ["type", "version_major", "version_minor", "node_from", "node_to", "weight",
               "min_latency", "max_latency", "min_bandwidth", "max_bandwidth",
               "recommended_transfer_size", "recommended_sdma_engine_id_mask", "flags"]

# gpu_metrics v1.6, 1664-byte layout (reference/gpu_metrics_structs.h, offsets checked with gcc)
GM_FIELDS = [  # name, struct code, count, offset
    ("temperature_hotspot", "H", 1, 4), ("temperature_mem", "H", 1, 6),
    ("temperature_vrsoc", "H", 1, 8), ("curr_socket_power", "H", 1, 10),
    ("average_gfx_activity", "H", 1, 12), ("average_umc_activity", "H", 1, 14),
    ("energy_accumulator", "Q", 1, 16), ("system_clock_counter", "Q", 1, 24),
    ("accumulation_counter", "I", 1, 32), ("prochot_residency_acc", "I", 1, 36),
    ("ppt_residency_acc", "I", 1, 40), ("socket_thm_residency_acc", "I", 1, 44),
    ("vr_thm_residency_acc", "I", 1, 48), ("hbm_thm_residency_acc", "I", 1, 52),
    ("gfxclk_lock_status", "I", 1, 56), ("pcie_link_width", "H", 1, 60),
    ("pcie_link_speed", "H", 1, 62), ("xgmi_link_width", "H", 1, 64),
    ("xgmi_link_speed", "H", 1, 66), ("gfx_activity_acc", "I", 1, 68),
    ("mem_activity_acc", "I", 1, 72), ("pcie_bandwidth_acc", "Q", 1, 80),
    ("pcie_bandwidth_inst", "Q", 1, 88), ("pcie_l0_to_recov_count_acc", "Q", 1, 96),
    ("pcie_replay_count_acc", "Q", 1, 104), ("pcie_replay_rover_count_acc", "Q", 1, 112),
    ("pcie_nak_sent_count_acc", "I", 1, 120), ("pcie_nak_rcvd_count_acc", "I", 1, 124),
    ("xgmi_read_data_acc", "Q", 8, 128), ("xgmi_write_data_acc", "Q", 8, 192),
    ("firmware_timestamp", "Q", 1, 256), ("current_gfxclk", "H", 8, 264),
    ("current_socclk", "H", 4, 280), ("current_vclk0", "H", 4, 288),
    ("current_dclk0", "H", 4, 296), ("current_uclk", "H", 1, 304),
    ("num_partition", "H", 1, 306), ("pcie_lc_perf_other_end_recovery", "I", 1, 1656)]
GM_SIZE = 1664
GM_XCP_OFFSET, GM_XCP_SIZE, GM_NUM_XCP = 312, 168, 8
GM_XCP_FIELDS = [("gfx_busy_inst", "I", 8, 0), ("jpeg_busy", "H", 32, 32),
                 ("vcn_busy", "H", 4, 96), ("gfx_busy_acc", "Q", 8, 104)]
ALL_ONES = {"H": 0xFFFF, "I": 0xFFFFFFFF, "Q": 0xFFFFFFFFFFFFFFFF}


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
def bdf(g):
    return "0000:%02x:00.0" % BUSES[g]


def card_index(g, p=0):
    """amdgpu registers the PCI device then 7 amdgpu_xcp platform devices per MI300 GPU, each with
    a primary and a render minor, so GPU g is card(8g)/renderD(128+8g) and partition p of it is
    card(8g+p)/renderD(128+8g+p) (real CPX drm_render_minor 128.. contiguous per GPU)."""
    return 8 * g + p


def render_minor(g, p=0):
    return 128 + card_index(g, p)


def kfd_gpu_id(mode, g, p):
    h = hashlib.sha256(("kfd-gpu-id/%s/%d/%d" % (mode, g, p)).encode()).digest()
    return 1 + (int.from_bytes(h[:4], "little") % 65534)


def xgmi_node_id(g):
    h = hashlib.sha256(("xgmi-node-id/%d" % g).encode()).digest()
    return int.from_bytes(h[:8], "little") >> 1


def props_text(pairs):
    return "".join("%s %s\n" % (k, v) for k, v in pairs)


def sclk_lines(kind, now):
    if kind == "S":
        assert now < DSCLK_THRESHOLD
        return [("S", now, True), ("0", SCLK_MIN, False), ("1", SCLK_MAX, False)], \
            "S: %dMhz *\n0: %dMhz\n1: %dMhz\n" % (now, SCLK_MIN, SCLK_MAX)
    if kind == "max":
        assert now == SCLK_MAX
        return [("0", SCLK_MIN, False), ("1", SCLK_MAX, True)], \
            "0: %dMhz \n1: %dMhz *\n" % (SCLK_MIN, SCLK_MAX)
    assert SCLK_MIN + 1 < now < SCLK_MAX - 1 or DSCLK_THRESHOLD <= now < SCLK_MIN
    return [("0", SCLK_MIN, False), ("1", now, True), ("2", SCLK_MAX, False)], \
        "0: %dMhz\n1: %dMhz *\n2: %dMhz\n" % (SCLK_MIN, now, SCLK_MAX)


def print_clks(levels, now):
    """smu_v13_0_6_print_clks(): deep-sleep 'S:' line below the threshold, else one line per
    level with '%d: %uMhz %s\\n' (trailing space on non-current lines)."""
    if now < DSCLK_THRESHOLD:
        lines = [("S", now, True)] + [(str(i), v, False) for i, v in enumerate(levels)]
        text = "S: %dMhz *\n" % now + "".join("%d: %dMhz\n" % (i, v) for i, v in enumerate(levels))
        return lines, text
    assert now in levels, (levels, now)
    lvl = levels.index(now)
    lines = [(str(i), v, i == lvl) for i, v in enumerate(levels)]
    text = "".join("%d: %dMhz %s\n" % (i, v, "*" if i == lvl else "") for i, v in enumerate(levels))
    return lines, text


def levels_json(lines):
    return [{"level": l, "mhz": v, "current": c} for l, v, c in lines]


class Tree:
    def __init__(self):
        self.files = {}

    def add(self, path, data):
        if isinstance(data, str):
            data = data.encode("ascii")
        assert path not in self.files, path
        assert all(ord(c) < 128 for c in path), path
        self.files[path] = data

    def write(self, root):
        for path in sorted(self.files):
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(self.files[path])


# --------------------------------------------------------------------------------------------
# model: everything the files and expected.json are made from
# --------------------------------------------------------------------------------------------
def xcc_busy(mode, g):
    """Per-XCC busy % for GPU g (8 values)."""
    if mode == "spx":
        base = {4: 97, 5: 95, 6: 41, 7: 100}.get(g, 0)
        jit = [0, -1, 1, 0, -2, 1, 2, -1]
        return [max(0, min(100, base + j)) if base else 0 for j in jit]
    busy = [0] * 8
    for pr in PROCS:
        for a in pr["cpx"]:
            if a["gpu"] == g and a.get("cu"):
                busy[a["part"]] = min(100, 60 + a["cu"])
    return busy


def attachments(mode, pr):
    return pr["spx"] if mode == "spx" else pr["cpx"]


def vram_used(mode, g):
    used = GPUS[g]["vram_base"]
    for pr in PROCS:
        for a in attachments(mode, pr):
            if a["gpu"] == g and a["vram"]:
                used += a["vram"] * 1024 * 1024 + FDINFO_EXTRA_VRAM_KIB * 1024
    return used


def gtt_used(mode, g):
    used = GTT_BASE
    for pr in PROCS:
        for a in attachments(mode, pr):
            if a["gpu"] == g:
                used += a["gtt"] * 1024 * 1024
    return used


def kfd_nodes(mode):
    """List of GPU KFD nodes: dicts with node, g, p."""
    out = []
    if mode == "spx":
        for g in range(NUM_GPUS):
            out.append(dict(node=2 + g, g=g, p=0))
    else:
        for g in range(NUM_GPUS):
            for p in range(8):
                out.append(dict(node=2 + 8 * g + p, g=g, p=p))
    for n in out:
        n["gpu_id"] = kfd_gpu_id(mode, n["g"], n["p"])
        n["numa"] = 0 if n["g"] < 4 else 1
    ids = [n["gpu_id"] for n in out]
    assert len(set(ids)) == len(ids)
    return out


def gpu_props(mode, n, nodes):
    g, p = n["g"], n["p"]
    if mode == "spx":
        simd, arrays, nxcc = 1216, 32, 8
        simd_base = SPX_SIMD_ID_BASE0 + 320 * g
        loc = BUSES[g] << 8
        xgmi_sdma, vram = 14, VRAM_TOTAL
    else:
        simd, arrays, nxcc = 152, 4, 1
        simd_base = CPX_SIMD_ID_BASE0 + 40 * (n["node"] - 2)
        loc = (BUSES[g] << 8) | p
        xgmi_sdma, vram = 0, VRAM_PER_CPX_PARTITION
    values = dict(
        cpu_cores_count=0, simd_count=simd, mem_banks_count=1,
        caches_count=len(CACHES) if mode == "spx" else 80,
        io_links_count=1 + len(nodes) - 1, p2p_links_count=1, cpu_core_id_base=0,
        simd_id_base=simd_base, max_waves_per_simd=8, lds_size_in_kb=64, gds_size_in_kb=0,
        num_gws=64, wave_front_size=64, array_count=arrays, simd_arrays_per_engine=1,
        cu_per_simd_array=10, simd_per_cu=4, max_slots_scratch_cu=32, gfx_target_version=90402,
        vendor_id=PCI_VENDOR, device_id=PCI_DEVICE, location_id=loc, domain=0,
        drm_render_minor=render_minor(g, p), hive_id=HIVE_ID, num_sdma_engines=2,
        num_sdma_xgmi_engines=xgmi_sdma, num_sdma_queues_per_engine=8, num_cp_queues=24,
        max_engine_clk_fcompute=2100, local_mem_size=0, fw_version=177, capability=2893521536,
        debug_prop=1511, sdma_fw_version=24, unique_id=UNIQUE_IDS[g], num_xcc=nxcc,
        max_engine_clk_ccompute=2750)
    return [(k, values[k]) for k in GPU_PROP_KEYS], vram


CPU_PROPS_COMMON = dict(cpu_cores_count=96, simd_count=0, mem_banks_count=1, caches_count=0,
                        simd_id_base=0, max_waves_per_simd=0, lds_size_in_kb=0, gds_size_in_kb=0,
                        num_gws=0, wave_front_size=0, array_count=0, simd_arrays_per_engine=0,
                        cu_per_simd_array=0, simd_per_cu=0, max_slots_scratch_cu=0,
                        gfx_target_version=0, vendor_id=0, device_id=0, location_id=0, domain=0,
                        drm_render_minor=0, hive_id=0, num_sdma_engines=0,
                        num_sdma_xgmi_engines=0, num_sdma_queues_per_engine=0, num_cp_queues=0,
                        max_engine_clk_ccompute=2750)

# Representative caches per GPU node (a real node lists one entry per CU / CU pair / XCC:
# caches_count 80 per XCC in the real CPX capture); see README.md.
CACHES = [  # level, size KiB, line, type, cu span for sibling map
    (1, 32, 128, 9, 1),      # TCP vector L1, per CU
    (1, 64, 64, 10, 2),      # SQC instruction cache, per 2 CUs
    (1, 16, 64, 9, 2),       # SQC scalar data cache, per 2 CUs
    (2, None, 128, 9, "xcc"),  # L2 (TCC)
    (3, 262144, 64, 9, "xcc"),  # L3 = Infinity Cache / MALL [SMI] rocminfo L3 262144 KB
]


def cache_files(mode, simd_base):
    out = []
    for i, (level, size, line, ctype, span) in enumerate(CACHES):
        if size is None:
            size = 32768 if mode == "spx" else 4096   # [SMI] rocminfo SPX L2 32768 KB
        if span == "xcc":
            bits = []
            for se in range(4):                        # 4 shader arrays x 10 CU slots
                word = [1 if cu < 10 and not (cu == 9 and se % 2) else 0 for cu in range(32)]
                bits += word
        else:
            bits = [1 if b < span else 0 for b in range(32)]
        text = props_text([("processor_id_low", simd_base), ("level", level), ("size", size),
                           ("cache_line_size", line), ("cache_lines_per_tag", 0),
                           ("association", 0), ("latency", 0), ("type", ctype)])
        text += "sibling_map " + ",".join(str(b) for b in bits) + "\n"
        out.append((i, text, dict(level=level, size_kib=size, cache_line_size=line, type=ctype)))
    return out


LINK_ROW = ["type", "node_from", "node_to", "weight", "min_bandwidth", "max_bandwidth",
            "recommended_sdma_engine_id_mask", "flags"]


def link_row(v):
    return [v[k] for k in LINK_ROW]


def iolink(t, nf, nt, weight, minbw, maxbw, sdma, flags):
    v = dict(type=t, version_major=0, version_minor=0, node_from=nf, node_to=nt, weight=weight,
             min_latency=0, max_latency=0, min_bandwidth=minbw, max_bandwidth=maxbw,
             recommended_transfer_size=0, recommended_sdma_engine_id_mask=sdma, flags=flags)
    return props_text((k, v[k]) for k in IOLINK_KEYS), v


# --------------------------------------------------------------------------------------------
# gpu_metrics
# --------------------------------------------------------------------------------------------
def gpu_metrics(mode, g):
    G = GPUS[g]
    busy = xcc_busy(mode, g)
    sclk = G["sclk"][1]
    jit = [0, -3, 2, -1, -4, 1, -2, 3]
    gfxclk = [sclk if x == 0 else max(1, min(SCLK_MAX, sclk + jit[x])) for x in range(8)]
    energy_j = UPTIME_S * (G["power"] * 0.55 + 60) + 1000.123 * g
    energy_raw = int(energy_j * 65536)
    vals = dict(
        temperature_hotspot=G["tj"], temperature_mem=G["tm"], temperature_vrsoc=G["tvr"],
        curr_socket_power=G["power"], average_gfx_activity=round(sum(busy) / 8),
        average_umc_activity=G["mem_busy"], energy_accumulator=energy_raw,
        system_clock_counter=UPTIME_S * 10**9 + 123456789 + 1000123 * g,
        accumulation_counter=UPTIME_S * 10 + g,
        prochot_residency_acc=0, ppt_residency_acc=12345 if g == 7 else 0,
        socket_thm_residency_acc=0, vr_thm_residency_acc=0,
        hbm_thm_residency_acc=321 if g == 7 else 0, gfxclk_lock_status=0,
        pcie_link_width=16, pcie_link_speed=320, xgmi_link_width=16, xgmi_link_speed=32,
        gfx_activity_acc=50288 + 7919 * g * (1 + sum(busy)), mem_activity_acc=9001 * g * (1 + G["mem_busy"]),
        pcie_bandwidth_acc=0 if g < 4 else 120000 + 77 * g, pcie_bandwidth_inst=[0, 0, 0, 0, 3, 7, 21, 2][g],
        pcie_l0_to_recov_count_acc=2, pcie_replay_count_acc=G["replay"],
        pcie_replay_rover_count_acc=0, pcie_nak_sent_count_acc=0, pcie_nak_rcvd_count_acc=0,
        xgmi_read_data_acc=[(0 if l == 7 else (1024 * (l + 1) + g * 100003 * (g >= 4))) for l in range(8)],
        xgmi_write_data_acc=[(0 if l == 7 else (2048 * (l + 1) + g * 90001 * (g >= 4))) for l in range(8)],
        firmware_timestamp=(UPTIME_S * 10**9 + 120000000 + 1000123 * g) // 10,
        current_gfxclk=gfxclk, current_socclk=[G["socclk"]] * 4,
        current_vclk0=[G["vclk"]] * 4, current_dclk0=[G["dclk"]] * 4, current_uclk=G["mclk"],
        num_partition=1 if mode == "spx" else 8, pcie_lc_perf_other_end_recovery=0)
    buf = bytearray(b"\xff" * GM_SIZE)
    struct.pack_into("<HBB", buf, 0, GM_SIZE, 1, 6)
    for name, code, count, off in GM_FIELDS:
        v = vals[name]
        if count == 1:
            struct.pack_into("<" + code, buf, off, v)
        else:
            struct.pack_into("<%d%s" % (count, code), buf, off, *v)
    xcps = []
    accs = [busy[x] * 1000 + 17 * x + 5 * g for x in range(8)]
    vcn_busy = [0, 0, 0, 0]
    if mode == "spx":
        xcps.append(dict(gfx_busy_inst=busy, jpeg_busy=[0] * 32, vcn_busy=vcn_busy,
                         gfx_busy_acc=accs))
    else:
        for i in range(8):
            xcps.append(dict(gfx_busy_inst=[busy[i]] + [None] * 7,
                             jpeg_busy=[0] * 8 + [None] * 24,
                             vcn_busy=[vcn_busy[i // 2]] + [None] * 3,
                             gfx_busy_acc=[accs[i]] + [None] * 7))
    for i, x in enumerate(xcps):
        base = GM_XCP_OFFSET + i * GM_XCP_SIZE
        for name, code, count, off in GM_XCP_FIELDS:
            arr = [ALL_ONES[code] if v is None else v for v in x[name]]
            struct.pack_into("<%d%s" % (count, code), buf, base + off, *arr)
    assert len(buf) == GM_SIZE
    return bytes(buf), decode_gpu_metrics(bytes(buf))


def decode_gpu_metrics(blob):
    """Decode to reader units (None = all-ones 'not supported')."""
    size, fmt, content = struct.unpack_from("<HBB", blob, 0)
    out = dict(structure_size=size, format_revision=fmt, content_revision=content)
    for name, code, count, off in GM_FIELDS:
        vals = list(struct.unpack_from("<%d%s" % (count, code), blob, off))
        vals = [None if v == ALL_ONES[code] else v for v in vals]
        out[name] = vals[0] if count == 1 else vals
    xcp = []
    for i in range(GM_NUM_XCP):
        base = GM_XCP_OFFSET + i * GM_XCP_SIZE
        entry = {}
        for name, code, count, off in GM_XCP_FIELDS:
            vals = struct.unpack_from("<%d%s" % (count, code), blob, base + off)
            entry[name] = [None if v == ALL_ONES[code] else v for v in vals]
        xcp.append(None if all(v is None for vs in entry.values() for v in vs) else entry)
    out["xcp_stats"] = xcp
    # unit conversions a reader must apply
    e = out["energy_accumulator"]
    out["energy_accumulated_j"] = None if e is None else e / 65536.0
    out["pcie_link_speed_gts"] = None if out["pcie_link_speed"] is None else out["pcie_link_speed"] / 10.0
    ts = out["firmware_timestamp"]
    out["firmware_timestamp_ns"] = None if ts is None else ts * 10
    return out


# --------------------------------------------------------------------------------------------
# capture builder
# --------------------------------------------------------------------------------------------
def build(mode):
    cap = SPX if mode == "spx" else CPX
    t = Tree()
    exp = {"_meta": {
        "capture": cap, "constructed": True,
        "generator": "captures/tools/make_mi300x.py",
        "note": "CONSTRUCTED, not recorded. Values a correct reader must report for the files in "
                "this folder. Top-level 'cardN' keys are the 8 PCI GPUs.",
        "units": {"temperature": "degC", "power": "W", "energy": "J", "clock": "MHz",
                  "memory": "bytes", "activity": "%", "voltage": "mV", "pcie_speed": "GT/s",
                  "pcie_width": "lanes", "time": "ns unless the key says otherwise"},
        "null_means": "not supported / absent (e.g. gpu_metrics all-ones sentinel)",
        "kfd_link_row": LINK_ROW + ["(other keys: version_major/minor, min/max_latency, "
                                    "recommended_transfer_size are 0)"],
        "kfd_dirs_note": "kfd_nodes[n].dirs = sub-folders present; the CPX capture, like the real CPX "
                         "capture, has caches_count/p2p_links_count in properties but no caches/ or "
                         "p2p_links/ folders"}}
    nodes = kfd_nodes(mode)
    S = "sys/class/drm/"
    K = "sys/class/kfd/kfd/"
    T = K + "topology/"

    # ---- per GPU: PCI card device ----
    for g in range(NUM_GPUS):
        G = GPUS[g]
        c = card_index(g)
        cname = "card%d" % c
        d = S + cname + "/device/"
        t.add(S + cname + "/dev", "226:%d\n" % c)
        t.add(S + cname + "/uevent", "MAJOR=226\nMINOR=%d\nDEVNAME=dri/card%d\nDEVTYPE=drm_minor\n" % (c, c))
        modalias = "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X" % (
            PCI_VENDOR, PCI_DEVICE, PCI_SUBSYS[0], PCI_SUBSYS[1], PCI_CLASS >> 16,
            (PCI_CLASS >> 8) & 0xFF, PCI_CLASS & 0xFF)
        t.add(d + "uevent", "DRIVER=amdgpu\nPCI_CLASS=%X\nPCI_ID=%04X:%04X\nPCI_SUBSYS_ID=%04X:%04X\n"
              "PCI_SLOT_NAME=%s\nMODALIAS=%s\n" % (PCI_CLASS, PCI_VENDOR, PCI_DEVICE,
                                                   PCI_SUBSYS[0], PCI_SUBSYS[1], bdf(g), modalias))
        t.add(d + "modalias", modalias + "\n")
        t.add(d + "vendor", "0x%04x\n" % PCI_VENDOR)
        t.add(d + "device", "0x%04x\n" % PCI_DEVICE)
        t.add(d + "subsystem_vendor", "0x%04x\n" % PCI_SUBSYS[0])
        t.add(d + "subsystem_device", "0x%04x\n" % PCI_SUBSYS[1])
        t.add(d + "revision", "0x%02x\n" % PCI_REVISION)
        t.add(d + "class", "0x%06x\n" % PCI_CLASS)
        numa = 0 if g < 4 else 1
        t.add(d + "numa_node", "%d\n" % numa)
        t.add(d + "local_cpulist", CPU_CPULISTS[numa] + "\n")
        t.add(d + "unique_id", "%016x\n" % UNIQUE_IDS[g])
        t.add(d + "serial_number", SERIALS[g] + "\n")
        t.add(d + "product_name", PRODUCT_NAME + "\n")
        t.add(d + "product_number", PRODUCT_NUMBER + "\n")
        t.add(d + "manufacturer", MANUFACTURER + "\n")
        t.add(d + "fru_id", FRU_ID + "\n")
        t.add(d + "vbios_version", VBIOS + "\n")
        vused, gused = vram_used(mode, g), gtt_used(mode, g)
        t.add(d + "mem_info_vram_total", "%d\n" % VRAM_TOTAL)
        t.add(d + "mem_info_vram_used", "%d\n" % vused)
        t.add(d + "mem_info_vis_vram_total", "%d\n" % VRAM_TOTAL)
        t.add(d + "mem_info_vis_vram_used", "%d\n" % vused)
        t.add(d + "mem_info_gtt_total", "%d\n" % GTT_TOTAL)
        t.add(d + "mem_info_gtt_used", "%d\n" % gused)
        t.add(d + "mem_info_vram_vendor", VRAM_VENDOR + "\n")
        sl, stext = sclk_lines(*G["sclk"])
        t.add(d + "pp_dpm_sclk", stext)
        clocks = {"sclk": (G["sclk"][1], sl)}
        for name, levels, now in (("mclk", MCLK_LEVELS, G["mclk"]), ("fclk", FCLK_LEVELS, G["fclk"]),
                                  ("socclk", SOCCLK_LEVELS, G["socclk"]),
                                  ("vclk", VCLK_LEVELS, G["vclk"]), ("dclk", DCLK_LEVELS, G["dclk"])):
            lines, text = print_clks(levels, now)
            t.add(d + "pp_dpm_" + name, text)
            clocks[name] = (now, lines)
        t.add(d + "power_dpm_force_performance_level", G["perf"] + "\n")
        busy = xcc_busy(mode, g)
        gpu_busy = round(sum(busy) / 8)
        t.add(d + "gpu_busy_percent", "%d\n" % gpu_busy)
        t.add(d + "mem_busy_percent", "%d\n" % G["mem_busy"])
        t.add(d + "current_link_speed", "32.0 GT/s PCIe\n")
        t.add(d + "current_link_width", "16\n")
        t.add(d + "max_link_speed", "32.0 GT/s PCIe\n")
        t.add(d + "max_link_width", "16\n")
        t.add(d + "pcie_replay_count", "%d\n" % G["replay"])
        t.add(d + "current_compute_partition", ("SPX" if mode == "spx" else "CPX") + "\n")
        t.add(d + "available_compute_partition", "SPX, DPX, QPX, CPX\n")
        t.add(d + "current_memory_partition", "NPS1\n")
        t.add(d + "available_memory_partition", "NPS1, NPS4\n")
        t.add(d + "xgmi_device_id", "%d\n" % xgmi_node_id(g))
        t.add(d + "xgmi_physical_id", "%d\n" % g)
        t.add(d + "xgmi_hive_info/xgmi_hive_id", "%d\n" % HIVE_ID)
        for ip, v in FIRMWARE:
            t.add(d + "fw_version/%s_fw_version" % ip, "0x%08x\n" % v)
        blob, gm = gpu_metrics(mode, g)
        t.add(d + "gpu_metrics", blob)
        hw = "hwmon%d" % (2 + g)
        h = d + "hwmon/" + hw + "/"
        t.add(h + "name", "amdgpu\n")
        t.add(h + "uevent", "")
        t.add(h + "temp2_input", "%d\n" % (G["tj"] * 1000))
        t.add(h + "temp2_label", "junction\n")
        t.add(h + "temp2_crit", "%d\n" % (TEMP_JUNC_CRIT * 1000))
        t.add(h + "temp2_crit_hyst", "-273150\n")
        t.add(h + "temp2_emergency", "%d\n" % (TEMP_JUNC_EMERG * 1000))
        t.add(h + "temp3_input", "%d\n" % (G["tm"] * 1000))
        t.add(h + "temp3_label", "mem\n")
        t.add(h + "temp3_crit", "%d\n" % (TEMP_MEM_CRIT * 1000))
        t.add(h + "temp3_crit_hyst", "-273150\n")
        t.add(h + "temp3_emergency", "%d\n" % (TEMP_MEM_EMERG * 1000))
        t.add(h + "power1_input", "%d\n" % (G["power"] * 1000000))
        t.add(h + "power1_label", "PPT\n")
        t.add(h + "power1_cap", "%d\n" % (G["cap"] * 1000000))
        t.add(h + "power1_cap_max", "%d\n" % (POWER_CAP_W * 1000000))
        t.add(h + "power1_cap_min", "0\n")
        t.add(h + "power1_cap_default", "%d\n" % (POWER_CAP_W * 1000000))
        t.add(h + "freq1_input", "%d\n" % (G["sclk"][1] * 1000000))
        t.add(h + "freq1_label", "sclk\n")
        t.add(h + "freq2_input", "%d\n" % (G["mclk"] * 1000000))
        t.add(h + "freq2_label", "mclk\n")

        gnodes = [n for n in nodes if n["g"] == g]
        e = dict(
            bdf=bdf(g), gpu_index=g, drm_card=cname, render_minor=render_minor(g),
            hwmon=hw, pci=dict(vendor_id="0x%04x" % PCI_VENDOR, device_id="0x%04x" % PCI_DEVICE,
                               subsystem_vendor_id="0x%04x" % PCI_SUBSYS[0],
                               subsystem_device_id="0x%04x" % PCI_SUBSYS[1],
                               revision="0x%02x" % PCI_REVISION, pci_class="0x%06x" % PCI_CLASS),
            numa_node=numa, local_cpulist=CPU_CPULISTS[numa],
            unique_id="0x%016x" % UNIQUE_IDS[g], unique_id_decimal=UNIQUE_IDS[g],
            serial_number=SERIALS[g], product_name=PRODUCT_NAME, product_number=PRODUCT_NUMBER,
            manufacturer=MANUFACTURER, fru_id=FRU_ID, vbios_version=VBIOS,
            gfx_target="gfx942", gfx_target_version=90402, compute_units=304, simd_count=1216,
            simd_per_cu=4, num_xcc=8, wave_front_size=64, max_engine_clk=2100.0,
            temperature_junction=float(G["tj"]), temperature_mem=float(G["tm"]),
            temperature_vrsoc=float(G["tvr"]), temperature_edge=None,
            temperature_junction_crit=float(TEMP_JUNC_CRIT),
            temperature_junction_emergency=float(TEMP_JUNC_EMERG),
            temperature_mem_crit=float(TEMP_MEM_CRIT), temperature_mem_emergency=float(TEMP_MEM_EMERG),
            temperature_junction_crit_hyst=-273.15, temperature_mem_crit_hyst=-273.15,
            power_current=float(G["power"]), power_average=None, power_cap=float(G["cap"]),
            power_cap_default=float(POWER_CAP_W), power_cap_max=float(POWER_CAP_W),
            power_cap_min=0.0, energy_accumulated=gm["energy_accumulated_j"],
            fan_speed=None, fan_rpm=None, voltage_gfx=None,
            gfx_activity=float(gpu_busy), mem_activity=float(G["mem_busy"]),
            vram_total=VRAM_TOTAL, vram_used=vused, vis_vram_total=VRAM_TOTAL, vis_vram_used=vused,
            gtt_total=GTT_TOTAL, gtt_used=gused, vram_vendor=VRAM_VENDOR,
            pcie_link_speed=32.0, pcie_link_width=16, pcie_max_link_speed=32.0,
            pcie_max_link_width=16, pcie_replay_count=G["replay"], pcie_dpm_levels=None,
            power_profiles=None,
            performance_level=G["perf"],
            compute_partition="SPX" if mode == "spx" else "CPX", memory_partition="NPS1",
            available_compute_partitions=["SPX", "DPX", "QPX", "CPX"],
            available_memory_partitions=["NPS1", "NPS4"],
            xgmi_physical_id=g, xgmi_device_id=xgmi_node_id(g), xgmi_hive_id=HIVE_ID,
            firmware={ip: "0x%08x" % v for ip, v in FIRMWARE},
            hwmon_freq1_sclk=float(G["sclk"][1]), hwmon_freq2_mclk=float(G["mclk"]))
        for name, (now, lines) in clocks.items():
            e["clock_" + name] = float(now)
            e["clock_%s_deep_sleep" % name] = lines[0][0] == "S"
            e["clock_%s_levels" % name] = levels_json(lines)
        e["kfd_nodes"] = [n["node"] for n in gnodes]
        e["kfd_gpu_ids"] = [n["gpu_id"] for n in gnodes]
        e["partitions"] = [dict(
            partition=n["p"], kfd_node=n["node"], gpu_id=n["gpu_id"],
            render_minor=render_minor(g, n["p"]), drm_card="card%d" % card_index(g, n["p"]),
            location_id=(BUSES[g] << 8) | (n["p"] if mode == "cpx" else 0),
            simd_count=1216 if mode == "spx" else 152, compute_units=304 if mode == "spx" else 38,
            num_xcc=8 if mode == "spx" else 1,
            vram_total=VRAM_TOTAL if mode == "spx" else VRAM_PER_CPX_PARTITION) for n in gnodes]
        gm_json = dict(gm)
        e["gpu_metrics"] = gm_json
        exp[cname] = e

    # ---- XCP platform devices (cards 8g+1..8g+7), both modes ----
    xcp = {}
    for g in range(NUM_GPUS):
        for p in range(1, 8):
            c = card_index(g, p)
            cname = "card%d" % c
            t.add(S + cname + "/dev", "226:%d\n" % c)
            t.add(S + cname + "/uevent", "MAJOR=226\nMINOR=%d\nDEVNAME=dri/card%d\nDEVTYPE=drm_minor\n" % (c, c))
            t.add(S + cname + "/device/uevent", "MODALIAS=platform:amdgpu_xcp\n")
            t.add(S + cname + "/device/modalias", "platform:amdgpu_xcp\n")
            t.add(S + cname + "/device/driver_override", "(null)\n")
            node = 2 + 8 * g + p if mode == "cpx" else None
            xcp[cname] = dict(parent_card="card%d" % card_index(g), parent_bdf=bdf(g), partition=p,
                              platform_device="amdgpu_xcp.%d" % (7 * g + p - 1),
                              render_minor=render_minor(g, p), kfd_node=node,
                              is_gpu=False)
    exp["xcp_cards"] = xcp
    # render nodes: one per card
    for c in range(64):
        m = 128 + c
        t.add(S + "renderD%d/dev" % m, "226:%d\n" % m)
        t.add(S + "renderD%d/uevent" % m, "MAJOR=226\nMINOR=%d\nDEVNAME=dri/renderD%d\nDEVTYPE=drm_minor\n" % (m, m))
    t.add("sys/module/amdgpu/initstate", "live\n")

    # ---- KFD topology ----
    t.add(K + "dev", "237:0\n")
    t.add(K + "uevent", "MAJOR=237\nMINOR=0\nDEVNAME=kfd\n")
    t.add(T + "generation_id", "%d\n" % (2 if mode == "spx" else 80))
    t.add(T + "system_properties", "platform_oem 4777524452235890003\nplatform_id 85015745549651\n"
          "platform_rev 2\n")
    kexp = {}
    by_numa = {0: [n for n in nodes if n["numa"] == 0], 1: [n for n in nodes if n["numa"] == 1]}
    for cpu in (0, 1):
        other = 1 - cpu
        links = [iolink(1, cpu, other, 32, 0, 0, 0, 0)]
        links += [iolink(2, cpu, n["node"], 20, 0, 64000, 3, 3) for n in by_numa[cpu]]
        p2p = [iolink(2, cpu, n["node"], 52, 0, 0, 0, 3) for n in by_numa[other]]
        v = dict(CPU_PROPS_COMMON, io_links_count=len(links), p2p_links_count=len(p2p),
                 cpu_core_id_base=0 if cpu == 0 else 128)
        base = T + "nodes/%d/" % cpu
        t.add(base + "properties", props_text((k, v[k]) for k in CPU_PROP_KEYS))
        t.add(base + "gpu_id", "0\n")
        t.add(base + "name", "\n")
        t.add(base + "mem_banks/0/properties", props_text([
            ("heap_type", 0), ("size_in_bytes", CPU_NODE_MEM[cpu]), ("flags", 0), ("width", 64),
            ("mem_clk_max", 4800)]))
        for i, (text, _) in enumerate(links):
            t.add(base + "io_links/%d/properties" % i, text)
        if mode == "spx":      # the real CPX capture has p2p_links_count but no p2p_links dirs
            for i, (text, _) in enumerate(p2p):
                t.add(base + "p2p_links/%d/properties" % i, text)
        kexp[str(cpu)] = dict(type="cpu", gpu_id=0, mem_bank_size=CPU_NODE_MEM[cpu],
                              dirs=dict(io_links=len(links), p2p_links=len(p2p) if mode == "spx" else 0,
                                        caches=0, mem_banks=1),
                              properties=v, io_links=[link_row(l[1]) for l in links],
                              p2p_links=[link_row(l[1]) for l in p2p])
    for n in nodes:
        pairs, vram = gpu_props(mode, n, nodes)
        base = T + "nodes/%d/" % n["node"]
        t.add(base + "properties", props_text(pairs))
        t.add(base + "gpu_id", "%d\n" % n["gpu_id"])
        t.add(base + "name", "ip discovery\n")
        t.add(base + "mem_banks/0/properties", props_text([
            ("heap_type", 1), ("size_in_bytes", vram), ("flags", 0), ("width", 8192),
            ("mem_clk_max", MCLK_LEVELS[-1])]))
        simd_base = dict(pairs)["simd_id_base"]
        caches = cache_files(mode, simd_base) if mode == "spx" else []
        for i, text, _ in caches:
            t.add(base + "caches/%d/properties" % i, text)
        links = [iolink(2, n["node"], n["numa"], 20, 0, 64000, 3, 1)]
        for m in nodes:
            if m is n:
                continue
            if mode == "spx":
                # kfd_fill_gpu_xgmi_link_to_gpu, use_ta_info: 15 * hops(1); x16 x 25Gbps = 50000 MB/s
                sdma = 1 << REC_SDMA_ENG_MAP[n["g"]][m["g"]]
                links.append(iolink(11, n["node"], m["node"], 15, 50000, 50000, sdma, 1))
            elif m["g"] == n["g"]:
                links.append(iolink(11, n["node"], m["node"], 13, 819200, 819200, 3, 1))
            else:
                links.append(iolink(11, n["node"], m["node"], 41, 0, 0, 3, 1))
        for i, (text, _) in enumerate(links):
            t.add(base + "io_links/%d/properties" % i, text)
        p2p = [iolink(2, n["node"], 1 - n["numa"], 52, 0, 0, 0, 1)]
        if mode == "spx":
            for i, (text, _) in enumerate(p2p):
                t.add(base + "p2p_links/%d/properties" % i, text)
        kexp[str(n["node"])] = dict(
            type="gpu", gpu_id=n["gpu_id"], card="card%d" % card_index(n["g"]), bdf=bdf(n["g"]),
            partition=n["p"], drm_render_minor=render_minor(n["g"], n["p"]),
            mem_bank_size=vram, caches=[c[2] for c in caches],
            dirs=dict(io_links=len(links), p2p_links=len(p2p) if mode == "spx" else 0,
                      caches=len(caches), mem_banks=1),
            properties=dict(pairs), io_links=[link_row(l[1]) for l in links],
            p2p_links=[link_row(l[1]) for l in p2p])
    exp["kfd_nodes"] = kexp
    exp["node"] = dict(gpu_count=NUM_GPUS, kfd_cpu_nodes=2, kfd_gpu_nodes=len(nodes),
                       drm_cards=64, drm_cards_pci_gpus=8, drm_cards_xcp=56, render_nodes=64,
                       hive_id=HIVE_ID, amdgpu_module_initstate="live",
                       amdgpu_module_version=None)

    # ---- processes ----
    node_of = {(n["g"], n["p"]): n for n in nodes}
    pexp = {}
    for pr in PROCS:
        pid = str(pr["pid"])
        pb = "proc/%s/" % pid
        cmdline = pr.get("cmdline_cpx", pr["cmdline"]) if mode == "cpx" else pr["cmdline"]
        t.add(pb + "comm", pr["comm"] + "\n")
        t.add(pb + "cmdline", "".join(a + "\0" for a in cmdline))
        uid = pr["uid"]
        t.add(pb + "status", (
            "Name:\t{c}\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t{p}\nNgid:\t0\nPid:\t{p}\n"
            "PPid:\t{pp}\nTracerPid:\t0\nUid:\t{u}\t{u}\t{u}\t{u}\nGid:\t{u}\t{u}\t{u}\t{u}\n"
            "FDSize:\t256\nGroups:\t{grp}\nThreads:\t{th}\n").format(
                c=pr["comm"][:15], p=pid, pp=pr["ppid"], u=uid, grp="44 %d" % uid if uid else "",
                th=64 if pr["pasid"] else 4))
        per_bdf, fdx, kfd_gpus, queues = {}, {}, {}, {}
        qid = 0
        for a in attachments(mode, pr):
            g, p = a["gpu"], a.get("part", 0)
            n = node_of[(g, p)]
            vram_b = a["vram"] * 1024 * 1024
            fd_vram_kib = (vram_b // 1024 + FDINFO_EXTRA_VRAM_KIB) if vram_b else 0
            gtt_kib = a["gtt"] * 1024
            agg = per_bdf.setdefault(bdf(g), dict(vram=0, gtt=0, cpu=0, engine_gfx_ns=0,
                                                  engine_compute_ns=0, engine_dma_ns=0,
                                                  client_ids=[], render_minors=[]))
            for fd, cid in a["fds"]:
                lines = [("pos", "0"), ("flags", "02100002"), ("mnt_id", "26"),
                         ("ino", str(1000 + render_minor(g, p)))]
                if pr["pasid"] is not None:
                    lines.append(("pasid", str(pr["pasid"])))
                else:
                    lines.append(("pasid", str(32800 + cid % 100)))
                text = "".join("%s:\t%s\n" % kv for kv in lines)
                text += "drm-driver:\tamdgpu\ndrm-pdev:\t%s\ndrm-client-id:\t%d\n" % (bdf(g), cid)
                text += "drm-memory-vram:\t%d KiB\n" % fd_vram_kib
                text += "drm-memory-gtt: \t%d KiB\n" % gtt_kib
                text += "drm-memory-cpu: \t0 KiB\n"
                if a.get("compute"):
                    text += "drm-engine-compute:\t%d ns\n" % a["compute"]
                if a.get("dma"):
                    text += "drm-engine-dma:\t%d ns\n" % a["dma"]
                t.add(pb + "fdinfo/%d" % fd, text)
                fdx[str(fd)] = dict(render_minor=render_minor(g, p), pdev=bdf(g), client_id=cid,
                                    vram=fd_vram_kib * 1024, gtt=gtt_kib * 1024, cpu=0,
                                    engine_compute_ns=a.get("compute", 0),
                                    engine_dma_ns=a.get("dma", 0))
                if cid not in agg["client_ids"]:   # same client id = same drm file (dup'ed fd)
                    agg["client_ids"].append(cid)
                    agg["vram"] += fd_vram_kib * 1024
                    agg["gtt"] += gtt_kib * 1024
                    agg["engine_compute_ns"] += a.get("compute", 0)
                    agg["engine_dma_ns"] += a.get("dma", 0)
                    agg["render_minors"].append(render_minor(g, p))
            if pr["pasid"] is not None:
                gid = n["gpu_id"]
                kb = "sys/class/kfd/kfd/proc/%s/" % pid
                t.add(kb + "vram_%d" % gid, "%d\n" % vram_b)
                t.add(kb + "sdma_%d" % gid, "%d\n" % a["sdma"])
                t.add(kb + "stats_%d/cu_occupancy" % gid, "%d\n" % a["cu"])
                t.add(kb + "stats_%d/evicted_ms" % gid, "0\n")
                kfd_gpus[str(gid)] = dict(kfd_node=n["node"], card="card%d" % card_index(g),
                                          bdf=bdf(g), partition=p, vram=vram_b, sdma=a["sdma"],
                                          cu_occupancy=a["cu"], evicted_ms=0)
                for qtype, qsize in a["queues"]:
                    qb = kb + "queues/%d/" % qid
                    t.add(qb + "gpuid", "%d" % gid)
                    t.add(qb + "type", "%d" % qtype)
                    t.add(qb + "size", "%d" % qsize)
                    queues[str(qid)] = dict(gpu_id=gid, type=qtype, type_name=KFD_QUEUE_TYPES[qtype],
                                            size=qsize)
                    qid += 1
        entry = dict(name=pr["comm"], uid=uid, ppid=pr["ppid"], cmdline=cmdline,
                     fdinfo=fdx, per_bdf=per_bdf)
        if pr["pasid"] is not None:
            t.add("sys/class/kfd/kfd/proc/%s/pasid" % pid, "%d\n" % pr["pasid"])
            entry["kfd"] = dict(pasid=pr["pasid"], gpus=kfd_gpus, queues=queues)
        else:
            entry["kfd"] = None
        pexp[pid] = entry
    exp["processes"] = pexp

    t.add("README.md", capture_readme(mode))
    t.add("expected.json", compact_json(exp) + "\n")
    return t


def compact_json(obj, indent=0, width=110):
    """JSON with small lists/dicts kept on one line (deterministic, readable, small)."""
    flat = json.dumps(obj, separators=(", ", ": "))
    if not isinstance(obj, (dict, list)) or len(flat) + indent <= width:
        return flat
    pad = " " * (indent + 1)
    if isinstance(obj, dict):
        items = ["%s%s: %s" % (pad, json.dumps(k), compact_json(v, indent + 1, width)) for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + compact_json(v, indent + 1, width) for v in obj]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def capture_readme(mode):
    if mode == "spx":
        head = "# mi300x-8gpu-spx-nps1 (CONSTRUCTED, not recorded)\n\n"
        body = ("8x AMD Instinct MI300X (PCI 1002:74a1) in SPX compute mode, NPS1 memory mode: 8 GPU "
                "KFD nodes (2-9, num_xcc 8, simd_count 1216) after CPU nodes 0-1.\n")
    else:
        head = "# mi300x-8gpu-cpx-nps1 (CONSTRUCTED, not recorded)\n\n"
        body = ("The same 8x MI300X node in CPX compute mode, NPS1 memory mode: 8 partitions per GPU, "
                "64 GPU KFD nodes (2-65, num_xcc 1, simd_count 152), property values taken from the "
                "real CPX topology in captures/real/k8s-device-plugin/topo-mi300-cpx (its missing "
                "node 65 is filled in).\n")
    return head + (
        "This folder was **generated by captures/tools/make_mi300x.py**. No MI300X was recorded: "
        "every file is built from documented facts and real values listed in "
        "../README.md. Do not present it as a recording.\n\n" + body +
        "\nLayout (flat, no symlinks): sys/class/drm/card{0,8,...,56}/device = the 8 PCI GPUs, "
        "card{8g+1..8g+7}/device = amdgpu_xcp platform devices (no PCI_ID, skip them as GPUs), "
        "sys/class/drm/renderD128..191, sys/class/kfd/kfd/{topology,proc}, sys/module/amdgpu, "
        "proc/<pid>/{comm,status,cmdline,fdinfo}.\n\n"
        "expected.json holds the values a correct reader must report (units: degC, W, J, MHz, "
        "bytes, %, GT/s, lanes). Check with:\n\n"
        "    python3 captures/tools/make_mi300x.py --check captures/constructed\n")


# --------------------------------------------------------------------------------------------
# --check: re-read the files and compare with expected.json
# --------------------------------------------------------------------------------------------
class Checker:
    def __init__(self, root):
        self.root = root
        self.errors = []
        self.checked = 0

    def rd(self, rel, binary=False):
        with open(os.path.join(self.root, rel), "rb") as f:
            data = f.read()
        return data if binary else data.decode("ascii")

    def eq(self, what, got, want):
        self.checked += 1
        if isinstance(want, float) or isinstance(got, float):
            ok = got is not None and want is not None and abs(got - want) <= 1e-6 * max(1.0, abs(want))
            ok = ok or (got is None and want is None)
        else:
            ok = got == want
        if not ok:
            self.errors.append("%s: file gives %r, expected.json says %r" % (what, got, want))

    def fail(self, msg):
        self.errors.append(msg)


LINE_RE = {
    "int": re.compile(r"^-?\d+\n$"),
    "hex": re.compile(r"^0x[0-9a-f]+\n$"),
    "dpm": re.compile(r"^(?:(?:S|\d+): \d+Mhz(?: \*| )?\n)+$"),
    "link_speed": re.compile(r"^\d+\.\d GT/s PCIe\n$"),
    "word": re.compile(r"^[A-Za-z0-9_.,\- ]*\n$"),
    "props": re.compile(r"^(?:[a-z0-9_]+ [0-9,]+\n)+$"),
}


def parse_props(text):
    out = []
    for line in text.splitlines():
        k, v = line.split(" ", 1)
        out.append((k, v))
    return out


def parse_dpm(text):
    lines = []
    for line in text.splitlines():
        m = re.match(r"^(S|\d+): (\d+)Mhz ?(\*)?$", line)
        if not m:
            raise ValueError("bad dpm line %r" % line)
        lines.append({"level": m.group(1), "mhz": int(m.group(2)), "current": bool(m.group(3))})
    cur = [l for l in lines if l["current"]]
    return lines, (float(cur[0]["mhz"]) if len(cur) == 1 else None)


def check_capture(root, real_keys):
    ck = Checker(root)
    exp = json.load(open(os.path.join(root, "expected.json")))
    mode = "spx" if exp["_meta"]["capture"] == SPX else "cpx"
    # file system shape
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            if os.path.islink(full):
                ck.fail("symlink: %s" % full)
            if not all(32 < ord(ch) < 127 for ch in name):
                ck.fail("non-plain file name: %r" % full)
    S = "sys/class/drm/"
    cards = sorted((k for k in exp if re.match(r"^card\d+$", k)), key=lambda k: int(k[4:]))
    ck.eq("number of PCI GPU cards", len(cards), 8)
    drm = sorted(os.listdir(os.path.join(root, S)))
    ck.eq("card dirs", len([d for d in drm if d.startswith("card")]), exp["node"]["drm_cards"])
    ck.eq("render dirs", len([d for d in drm if d.startswith("renderD")]), exp["node"]["render_nodes"])
    for cname in drm:
        if not cname.startswith("card"):
            continue
        ue = ck.rd(S + cname + "/device/uevent")
        is_pci = "PCI_ID=" in ue
        ck.eq(cname + " is a PCI GPU", is_pci, cname in cards)
        if not is_pci:
            ck.eq(cname + " xcp uevent", ue, "MODALIAS=platform:amdgpu_xcp\n")
            ck.eq(cname + " listed in xcp_cards", cname in exp["xcp_cards"], True)
    for cname in cards:
        e = exp[cname]
        d = S + cname + "/device/"
        h = d + "hwmon/" + e["hwmon"] + "/"
        ue = dict(l.split("=", 1) for l in ck.rd(d + "uevent").splitlines())
        ck.eq(cname + " PCI_SLOT_NAME", ue["PCI_SLOT_NAME"], e["bdf"])
        ck.eq(cname + " DRIVER", ue["DRIVER"], "amdgpu")
        ck.eq(cname + " PCI_ID", ue["PCI_ID"], "1002:74A1")
        ck.eq(cname + " PCI_CLASS", ue["PCI_CLASS"], "120000")
        for f in ("vendor", "device", "subsystem_vendor", "subsystem_device", "revision", "class"):
            key = {"vendor": "vendor_id", "device": "device_id", "subsystem_vendor": "subsystem_vendor_id",
                   "subsystem_device": "subsystem_device_id", "revision": "revision",
                   "class": "pci_class"}[f]
            ck.eq(cname + " " + f, ck.rd(d + f).strip(), e["pci"][key])
        ck.eq(cname + " unique_id", "0x" + ck.rd(d + "unique_id").strip(), e["unique_id"])
        ck.eq(cname + " unique_id format", bool(re.match(r"^[0-9a-f]{16}\n$", ck.rd(d + "unique_id"))), True)
        for f, key in (("serial_number", "serial_number"), ("product_name", "product_name"),
                       ("product_number", "product_number"), ("manufacturer", "manufacturer"),
                       ("fru_id", "fru_id"), ("vbios_version", "vbios_version"),
                       ("mem_info_vram_vendor", "vram_vendor"), ("local_cpulist", "local_cpulist"),
                       ("power_dpm_force_performance_level", "performance_level"),
                       ("current_compute_partition", "compute_partition"),
                       ("current_memory_partition", "memory_partition")):
            ck.eq(cname + " " + f, ck.rd(d + f)[:-1], e[key])
        ck.eq(cname + " available_compute_partition",
              ck.rd(d + "available_compute_partition").strip().split(", "), e["available_compute_partitions"])
        ck.eq(cname + " available_memory_partition",
              ck.rd(d + "available_memory_partition").strip().split(", "), e["available_memory_partitions"])
        for f, key in (("numa_node", "numa_node"), ("mem_info_vram_total", "vram_total"),
                       ("mem_info_vram_used", "vram_used"), ("mem_info_vis_vram_total", "vis_vram_total"),
                       ("mem_info_vis_vram_used", "vis_vram_used"), ("mem_info_gtt_total", "gtt_total"),
                       ("mem_info_gtt_used", "gtt_used"), ("current_link_width", "pcie_link_width"),
                       ("max_link_width", "pcie_max_link_width"), ("pcie_replay_count", "pcie_replay_count"),
                       ("xgmi_physical_id", "xgmi_physical_id"), ("xgmi_device_id", "xgmi_device_id"),
                       ("xgmi_hive_info/xgmi_hive_id", "xgmi_hive_id")):
            txt = ck.rd(d + f)
            if not LINE_RE["int"].match(txt):
                ck.fail("%s %s not an integer line: %r" % (cname, f, txt))
                continue
            ck.eq(cname + " " + f, int(txt), e[key])
        ck.eq(cname + " gpu_busy_percent", float(int(ck.rd(d + "gpu_busy_percent"))), e["gfx_activity"])
        ck.eq(cname + " mem_busy_percent", float(int(ck.rd(d + "mem_busy_percent"))), e["mem_activity"])
        for f, key in (("current_link_speed", "pcie_link_speed"), ("max_link_speed", "pcie_max_link_speed")):
            txt = ck.rd(d + f)
            if not LINE_RE["link_speed"].match(txt):
                ck.fail("%s %s format %r" % (cname, f, txt))
            ck.eq(cname + " " + f, float(txt.split()[0]), e[key])
        for ip, v in e["firmware"].items():
            txt = ck.rd(d + "fw_version/%s_fw_version" % ip)
            ck.eq(cname + " fw " + ip, bool(re.match(r"^0x[0-9a-f]{8}\n$", txt)), True)
            ck.eq(cname + " fw " + ip, txt.strip(), v)
        for clk in ("sclk", "mclk", "fclk", "socclk", "vclk", "dclk"):
            txt = ck.rd(d + "pp_dpm_" + clk)
            if not LINE_RE["dpm"].match(txt):
                ck.fail("%s pp_dpm_%s format %r" % (cname, clk, txt))
                continue
            lines, cur = parse_dpm(txt)
            ck.eq(cname + " pp_dpm_%s current" % clk, cur, e["clock_" + clk])
            ck.eq(cname + " pp_dpm_%s levels" % clk, lines, e["clock_%s_levels" % clk])
            ck.eq(cname + " pp_dpm_%s deep sleep" % clk, lines[0]["level"] == "S", e["clock_%s_deep_sleep" % clk])
        for absent in ("pp_dpm_pcie", "pp_power_profile_mode", "pp_dpm_dcefclk"):
            ck.eq(cname + " " + absent + " absent", os.path.exists(os.path.join(root, d + absent)), False)
        # hwmon
        ck.eq(cname + " hwmon name", ck.rd(h + "name"), "amdgpu\n")
        ck.eq(cname + " temp2_label", ck.rd(h + "temp2_label"), "junction\n")
        ck.eq(cname + " temp3_label", ck.rd(h + "temp3_label"), "mem\n")
        ck.eq(cname + " power1_label", ck.rd(h + "power1_label"), "PPT\n")
        for f, key, scale in (("temp2_input", "temperature_junction", 1000), ("temp3_input", "temperature_mem", 1000),
                              ("temp2_crit", "temperature_junction_crit", 1000),
                              ("temp2_emergency", "temperature_junction_emergency", 1000),
                              ("temp3_crit", "temperature_mem_crit", 1000),
                              ("temp3_emergency", "temperature_mem_emergency", 1000),
                              ("temp2_crit_hyst", "temperature_junction_crit_hyst", 1000),
                              ("temp3_crit_hyst", "temperature_mem_crit_hyst", 1000),
                              ("power1_input", "power_current", 1e6), ("power1_cap", "power_cap", 1e6),
                              ("power1_cap_max", "power_cap_max", 1e6), ("power1_cap_min", "power_cap_min", 1e6),
                              ("power1_cap_default", "power_cap_default", 1e6),
                              ("freq1_input", "hwmon_freq1_sclk", 1e6), ("freq2_input", "hwmon_freq2_mclk", 1e6)):
            txt = ck.rd(h + f)
            if not LINE_RE["int"].match(txt):
                ck.fail("%s %s format %r" % (cname, f, txt))
                continue
            ck.eq(cname + " " + f, int(txt) / scale, e[key])
        for absent in ("temp1_input", "temp1_label", "power1_average", "in0_input", "in1_input",
                       "fan1_input", "pwm1"):
            ck.eq(cname + " " + absent + " absent", os.path.exists(os.path.join(root, h + absent)),
                  False)
        ck.eq(cname + " temperature_edge", e["temperature_edge"], None)
        # gpu_metrics
        blob = ck.rd(d + "gpu_metrics", binary=True)
        ck.eq(cname + " gpu_metrics size", len(blob), 1664)
        ck.eq(cname + " gpu_metrics header", struct.unpack_from("<HBB", blob, 0), (1664, 1, 6))
        gm = decode_gpu_metrics(blob)
        gm_e = e["gpu_metrics"]
        for k, v in gm.items():
            ck.eq(cname + " gpu_metrics." + k, json.loads(json.dumps(v)), gm_e[k])
        ck.eq(cname + " gpu_metrics hotspot vs hwmon", float(gm["temperature_hotspot"]), e["temperature_junction"])
        ck.eq(cname + " gpu_metrics mem vs hwmon", float(gm["temperature_mem"]), e["temperature_mem"])
        ck.eq(cname + " gpu_metrics vrsoc", float(gm["temperature_vrsoc"]), e["temperature_vrsoc"])
        ck.eq(cname + " gpu_metrics power vs hwmon", float(gm["curr_socket_power"]), e["power_current"])
        ck.eq(cname + " gpu_metrics energy", gm["energy_accumulated_j"], e["energy_accumulated"])
        ck.eq(cname + " gpu_metrics gfxclk[0] vs sclk", float(gm["current_gfxclk"][0]), e["clock_sclk"])
        ck.eq(cname + " gpu_metrics uclk vs mclk", float(gm["current_uclk"]), e["clock_mclk"])
        ck.eq(cname + " gpu_metrics activity", float(gm["average_gfx_activity"]), e["gfx_activity"])
        ck.eq(cname + " gpu_metrics pcie speed", gm["pcie_link_speed_gts"], e["pcie_link_speed"])
        ck.eq(cname + " gpu_metrics num_partition", gm["num_partition"], 1 if mode == "spx" else 8)
        # KFD nodes of this GPU
        for part in e["partitions"]:
            nb = "sys/class/kfd/kfd/topology/nodes/%d/" % part["kfd_node"]
            props = dict(parse_props(ck.rd(nb + "properties")))
            ck.eq(cname + " kfd gpu_id", int(ck.rd(nb + "gpu_id")), part["gpu_id"])
            ck.eq(cname + " kfd unique_id", int(props["unique_id"]), e["unique_id_decimal"])
            ck.eq(cname + " kfd location_id", int(props["location_id"]), part["location_id"])
            ck.eq(cname + " kfd location bus", int(props["location_id"]) >> 8, int(e["bdf"][5:7], 16))
            ck.eq(cname + " kfd render minor", int(props["drm_render_minor"]), part["render_minor"])
            ck.eq(cname + " kfd simd_count", int(props["simd_count"]), part["simd_count"])
            ck.eq(cname + " kfd CUs", int(props["simd_count"]) // int(props["simd_per_cu"]), part["compute_units"])
            ck.eq(cname + " kfd num_xcc", int(props["num_xcc"]), part["num_xcc"])
            mb = dict(parse_props(ck.rd(nb + "mem_banks/0/properties")))
            ck.eq(cname + " kfd mem bank", int(mb["size_in_bytes"]), part["vram_total"])
            rd = "sys/class/drm/renderD%d/dev" % part["render_minor"]
            ck.eq(cname + " render node " + rd, ck.rd(rd), "226:%d\n" % part["render_minor"])
            card = "sys/class/drm/%s/dev" % part["drm_card"]
            ck.eq(cname + " card of partition", ck.rd(card), "226:%d\n" % (part["render_minor"] - 128))
    # KFD topology: keys, counts, links
    T = "sys/class/kfd/kfd/topology/nodes/"
    node_dirs = sorted(int(x) for x in os.listdir(os.path.join(root, T)))
    ck.eq("kfd node count", len(node_dirs), 2 + exp["node"]["kfd_gpu_nodes"])
    for nid in node_dirs:
        ne = exp["kfd_nodes"][str(nid)]
        nb = T + "%d/" % nid
        txt = ck.rd(nb + "properties")
        if not LINE_RE["props"].match(txt):
            ck.fail("node %d properties format" % nid)
        pairs = parse_props(txt)
        keys = [k for k, _ in pairs]
        want_keys = real_keys["gpu" if ne["type"] == "gpu" else "cpu"]
        ck.eq("node %d property keys (as the real CPX capture)" % nid, keys, want_keys)
        props = dict(pairs)
        for k, v in ne["properties"].items():
            ck.eq("node %d %s" % (nid, k), int(props[k]), v)
        for kind, cnt in (("io_links", "io_links_count"), ("p2p_links", "p2p_links_count"),
                          ("caches", "caches_count"), ("mem_banks", "mem_banks_count")):
            p = os.path.join(root, nb + kind)
            n = len(os.listdir(p)) if os.path.isdir(p) else 0
            ck.eq("node %d %s dirs" % (nid, kind), n, ne["dirs"][kind])
            if n:
                ck.eq("node %d %s dirs vs %s" % (nid, kind, cnt), n, int(props[cnt]))
        ck.eq("node %d io_links_count" % nid, int(props["io_links_count"]), len(ne["io_links"]))
        ck.eq("node %d p2p_links_count" % nid, int(props["p2p_links_count"]), len(ne["p2p_links"]))
        for kind in ("io_links", "p2p_links"):
            for i, le in enumerate(ne[kind][:ne["dirs"][kind]]):
                lt = ck.rd(nb + "%s/%d/properties" % (kind, i))
                lp = parse_props(lt)
                ck.eq("node %d %s/%d keys" % (nid, kind, i), [k for k, _ in lp], IOLINK_KEYS)
                lv = {k: int(v) for k, v in lp}
                ck.eq("node %d %s/%d" % (nid, kind, i), link_row(lv), le)
                for k in IOLINK_KEYS:
                    if k not in LINK_ROW:
                        ck.eq("node %d %s/%d %s" % (nid, kind, i, k), lv[k], 0)
        for i, ce in enumerate(ne.get("caches", [])):
            cp = dict(parse_props(ck.rd(nb + "caches/%d/properties" % i)))
            ck.eq("node %d cache %d level" % (nid, i), int(cp["level"]), ce["level"])
            ck.eq("node %d cache %d size" % (nid, i), int(cp["size"]), ce["size_kib"])
        if ne["type"] == "gpu":
            links = [dict((k, int(v)) for k, v in parse_props(ck.rd(nb + "io_links/%d/properties" % i)))
                     for i in range(ne["dirs"]["io_links"])]
            targets = sorted(l["node_to"] for l in links)
            others = sorted(x for x in node_dirs if x != nid and exp["kfd_nodes"][str(x)]["type"] == "gpu")
            ck.eq("node %d links to every other GPU node" % nid,
                  sorted(l["node_to"] for l in links if l["type"] == 11), others)
            ck.eq("node %d one PCIe link, to its own CPU node" % nid,
                  [l["node_to"] for l in links if l["type"] == 2], [exp[ne["card"]]["numa_node"]])
            ck.eq("node %d link count" % nid, len(targets), len(others) + 1)
    # processes
    for pid, pe in exp["processes"].items():
        pb = "proc/%s/" % pid
        ck.eq("pid %s comm" % pid, ck.rd(pb + "comm")[:-1], pe["name"])
        st = dict(l.split(":\t", 1) for l in ck.rd(pb + "status").splitlines())
        ck.eq("pid %s uid" % pid, int(st["Uid"].split("\t")[0]), pe["uid"])
        ck.eq("pid %s cmdline" % pid, ck.rd(pb + "cmdline").split("\0")[:-1], pe["cmdline"])
        per_bdf = {}
        for fd in sorted(os.listdir(os.path.join(root, pb + "fdinfo")), key=int):
            kv = {}
            for line in ck.rd(pb + "fdinfo/" + fd).splitlines():
                k, v = line.split(":", 1)
                kv[k] = v.strip()
            fe = pe["fdinfo"][fd]
            kib = lambda s: int(s.split()[0]) * 1024
            ns = lambda s: int(s.split()[0])
            ck.eq("pid %s fd %s driver" % (pid, fd), kv["drm-driver"], "amdgpu")
            ck.eq("pid %s fd %s pdev" % (pid, fd), kv["drm-pdev"], fe["pdev"])
            ck.eq("pid %s fd %s client" % (pid, fd), int(kv["drm-client-id"]), fe["client_id"])
            ck.eq("pid %s fd %s vram" % (pid, fd), kib(kv["drm-memory-vram"]), fe["vram"])
            ck.eq("pid %s fd %s gtt" % (pid, fd), kib(kv["drm-memory-gtt"]), fe["gtt"])
            ck.eq("pid %s fd %s compute" % (pid, fd), ns(kv.get("drm-engine-compute", "0 ns")), fe["engine_compute_ns"])
            ck.eq("pid %s fd %s dma" % (pid, fd), ns(kv.get("drm-engine-dma", "0 ns")), fe["engine_dma_ns"])
            agg = per_bdf.setdefault(kv["drm-pdev"], dict(ids=set(), vram=0, gtt=0, c=0, d=0))
            if int(kv["drm-client-id"]) not in agg["ids"]:
                agg["ids"].add(int(kv["drm-client-id"]))
                agg["vram"] += kib(kv["drm-memory-vram"])
                agg["gtt"] += kib(kv["drm-memory-gtt"])
                agg["c"] += ns(kv.get("drm-engine-compute", "0 ns"))
                agg["d"] += ns(kv.get("drm-engine-dma", "0 ns"))
        ck.eq("pid %s per-BDF set" % pid, sorted(per_bdf), sorted(pe["per_bdf"]))
        for b, agg in per_bdf.items():
            be = pe["per_bdf"].get(b, {})
            ck.eq("pid %s %s vram (client-id deduped)" % (pid, b), agg["vram"], be.get("vram"))
            ck.eq("pid %s %s gtt" % (pid, b), agg["gtt"], be.get("gtt"))
            ck.eq("pid %s %s compute ns" % (pid, b), agg["c"], be.get("engine_compute_ns"))
            ck.eq("pid %s %s dma ns" % (pid, b), agg["d"], be.get("engine_dma_ns"))
        kb = "sys/class/kfd/kfd/proc/%s/" % pid
        if pe["kfd"] is None:
            ck.eq("pid %s has no kfd entry" % pid, os.path.exists(os.path.join(root, kb)), False)
            continue
        ck.eq("pid %s pasid" % pid, int(ck.rd(kb + "pasid")), pe["kfd"]["pasid"])
        for gid, ge in pe["kfd"]["gpus"].items():
            ck.eq("pid %s vram_%s" % (pid, gid), int(ck.rd(kb + "vram_" + gid)), ge["vram"])
            ck.eq("pid %s sdma_%s" % (pid, gid), int(ck.rd(kb + "sdma_" + gid)), ge["sdma"])
            ck.eq("pid %s cu_occupancy %s" % (pid, gid), int(ck.rd(kb + "stats_%s/cu_occupancy" % gid)), ge["cu_occupancy"])
            ck.eq("pid %s gpu_id %s is a KFD node" % (pid, gid),
                  int(ck.rd("sys/class/kfd/kfd/topology/nodes/%d/gpu_id" % ge["kfd_node"])), int(gid))
        for q, qe in pe["kfd"]["queues"].items():
            for f, key in (("gpuid", "gpu_id"), ("type", "type"), ("size", "size")):
                txt = ck.rd(kb + "queues/%s/%s" % (q, f))
                ck.eq("pid %s queue %s %s has no newline" % (pid, q, f), "\n" in txt, False)
                ck.eq("pid %s queue %s %s" % (pid, q, f), int(txt), qe[key])
    # every GPU distinguishable by its live values
    for key in ("temperature_junction", "temperature_mem", "power_current", "clock_sclk", "vram_used"):
        vals = [exp[c][key] for c in cards]
        ck.eq("distinct %s across GPUs" % key, len(set(vals)), len(vals))
    # VRAM used covers the processes
    for cname in cards:
        e = exp[cname]
        s = sum(pe["per_bdf"].get(e["bdf"], {}).get("vram", 0) for pe in exp["processes"].values())
        ck.eq(cname + " vram_used >= process vram", e["vram_used"] >= s, True)
    ck.eq("amdgpu initstate", ck.rd("sys/module/amdgpu/initstate"), "live\n")
    ck.eq("amdgpu version absent", os.path.exists(os.path.join(root, "sys/module/amdgpu/version")), False)
    return ck


def real_property_keys():
    """Property keys, in order, of the real CPX capture's GPU and CPU nodes."""
    if not os.path.isdir(REAL_CPX):
        return {"gpu": GPU_PROP_KEYS, "cpu": CPU_PROP_KEYS}, "built-in list (real capture not found)"
    def keys(n):
        with open(os.path.join(REAL_CPX, "nodes", str(n), "properties")) as f:
            return [l.split(" ", 1)[0] for l in f.read().splitlines()]
    return {"gpu": keys(2), "cpu": keys(0)}, REAL_CPX


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir", help="output folder, e.g. captures/constructed")
    ap.add_argument("--check", action="store_true", help="re-read the captures and compare with expected.json")
    args = ap.parse_args()
    out = args.outdir
    if args.check:
        real_keys, src = real_property_keys()
        assert real_keys["gpu"] == GPU_PROP_KEYS and real_keys["cpu"] == CPU_PROP_KEYS, \
            "generator key list differs from the real CPX capture"
        bad = 0
        for cap in (SPX, CPX):
            ck = check_capture(os.path.join(out, cap), real_keys)
            print("%s: %d checks, %d errors (property keys from %s)" % (cap, ck.checked, len(ck.errors), src))
            for err in ck.errors[:50]:
                print("  ERROR " + err)
            bad += len(ck.errors)
        return 1 if bad else 0
    os.makedirs(out, exist_ok=True)
    for cap, mode in ((SPX, "spx"), (CPX, "cpx")):
        target = os.path.join(out, cap)
        if os.path.isdir(target):
            shutil.rmtree(target)
        tree = build(mode)
        tree.write(target)
        print("%s: %d files" % (target, len(tree.files)))
    # Keep the sections other generators append (make_mi300x_faults.py adds the fault node's).
    readme = os.path.join(out, "README.md")
    appended = ""
    if os.path.exists(readme):
        with open(readme) as f:
            existing = f.read()
        marker = existing.find("\n## `mi300x-8gpu-faults/`")
        if marker >= 0:
            appended = existing[marker:]
    with open(readme, "w") as f:
        f.write(TOP_README.rstrip("\n") + "\n" + appended if appended else TOP_README)
    return 0


TOP_README = """\
# Constructed MI300X captures: CONSTRUCTED, NOT RECORDED

**Nothing in this folder was read from a real MI300X.** No recording of an MI300X
`/sys/class/drm/cardN/device` folder exists in this project (see `../real/SOURCES.md`), so these two
captures are *built* by `../tools/make_mi300x.py` from documented facts and from real values found in
the real captures. Every file and `expected.json` come from the same Python values in that script.
Use them to test readers; never cite them as measurements.

| folder | what it models |
|---|---|
| `mi300x-8gpu-spx-nps1/` | 8x MI300X, SPX compute mode, NPS1 memory mode: KFD CPU nodes 0-1, GPU nodes 2-9 |
| `mi300x-8gpu-cpx-nps1/` | the same node in CPX mode: 8 partitions per GPU, KFD GPU nodes 2-65 |

Regenerate (deterministic; Python 3 standard library only) and self-check:

    python3 captures/tools/make_mi300x.py captures/constructed
    python3 captures/tools/make_mi300x.py --check captures/constructed

`--check` re-reads every file and compares it with `expected.json`. It also checks that the
gpu_metrics blobs are 1664 bytes with header 1664/1/6, that every KFD node has the property keys of the
real CPX capture in the same order, that there are no symlinks and that file names are plain ASCII.

## Layout of each capture (flat folders, no symlinks, as in `../real/`)

```
sys/class/drm/card{8g}/{dev,uevent}                 g = 0..7: the 8 PCI GPUs (card0, card8, ... card56)
sys/class/drm/card{8g}/device/                      PCI device: uevent, ids, mem_info_*, pp_dpm_*, partitions,
                                                    xgmi_*, fw_version/, gpu_metrics, hwmon/hwmon{2+g}/
sys/class/drm/card{8g+p}/{dev,uevent,device/}       p = 1..7: amdgpu_xcp platform devices (no PCI_ID)
sys/class/drm/renderD{128+8g+p}/{dev,uevent}        64 render nodes
sys/class/kfd/kfd/{dev,uevent}
sys/class/kfd/kfd/topology/{generation_id,system_properties}
sys/class/kfd/kfd/topology/nodes/N/{gpu_id,name,properties,mem_banks/0/,io_links/L/,p2p_links/L/,caches/C/}
sys/class/kfd/kfd/proc/<pid>/{pasid,vram_<gpuid>,sdma_<gpuid>,stats_<gpuid>/,queues/<qid>/}
sys/module/amdgpu/initstate                         "live" (no version file: in-tree driver)
proc/<pid>/{comm,status,cmdline,fdinfo/<fd>}
expected.json, README.md
```

`expected.json`: top-level `cardN` keys are the 8 PCI GPUs (values in degC, W, J, MHz, bytes, %,
GT/s, lanes; `null` = not supported), plus `xcp_cards`, `kfd_nodes`, `node` and `processes`.

## Facts used and where they come from

Source tags: **[CPX]** `../real/k8s-device-plugin/topo-mi300-cpx` (a real MI300X CPX KFD topology,
ROCm/k8s-device-plugin testdata); **[SMI]** `../real/_aux/thamada-nvidia-smi-MI300X` (real `rocm-smi -a`
and `rocminfo` text of a 4x MI300X machine); **[KRN]** the amdgpu/amdkfd kernel source as summarised in
`../../../shared/reference/NOTES.md` and read for this work (amdgpu_pm.c, smu_v13_0_6_ppt.c,
kfd_crat.c, kfd_topology.c, kfd_process.c, amdgpu_xcp.c, amdgpu_fdinfo.c, kgd_pp_interface.h);
**[FIX]** the real fdinfo sample `../real/_aux/fdinfo`; **[MADE]** invented here (plausible only).

| fact | value used | source |
|---|---|---|
| PCI vendor/device, revision | 0x1002 / 0x74a1, rev 0x00 | [SMI] "Device ID: 0x74a1", "Device Rev: 0x0"; rocminfo Chip ID 29857 |
| PCI subsystem | 0x1002:0x74a1 | task brief (not printed by [SMI]) |
| PCI class | 0x120000 (processing accelerator) | task brief / PCI class code 12h |
| ISA | gfx942, gfx_target_version 90402 | [SMI] rocminfo "gfx942"; [CPX] 90402 |
| CUs, SIMDs | 304 CUs, simd_per_cu 4, simd_count 1216 (SPX) / 152 (CPX) | [SMI] rocminfo "Compute Unit: 304", "SIMDs per CU: 4"; [CPX] 152 x 8 |
| XCCs | num_xcc 8 (SPX), 1 per CPX partition | [CPX] num_xcc 1; NOTES 5 |
| shader arrays | array_count 32 SPX (4 per XCC), simd_arrays_per_engine 1, cu_per_simd_array 10 | [SMI] "Shader Engines: 32", "Shader Arrs. per Eng.: 1"; [CPX] |
| wavefront, LDS, scratch, queues | wave_front_size 64, lds 64 KB, num_gws 64, max_waves_per_simd 8, num_cp_queues 24, sdma 2 x 8 queues | [CPX] (SPX reuses them) |
| clocks in KFD | max_engine_clk_fcompute 2100, CPU max_engine_clk_ccompute 2750 | [CPX]; [SMI] "Max Clock Freq. (MHz): 2100" |
| firmware in KFD | fw_version 177, sdma_fw_version 24, capability 2893521536, debug_prop 1511 | [CPX] |
| PCI buses | 05, 27, 47, 65, 85, a7, c7, e5 (domain 0000, device 00.0) | [CPX] location_id >> 8 |
| unique_id | the 8 KFD unique_ids of [CPX]; sysfs `unique_id` = same value as %016llx | [CPX]; NOTES 1 |
| hive_id | 15188982192727901047 (KFD hive_id and xgmi_hive_info/xgmi_hive_id) | [CPX] |
| NUMA | GPUs 0-3 on CPU node 0, 4-7 on CPU node 1 | [CPX] CPU node io_links |
| CPU nodes | 96 cores each, cpu_core_id_base 0 / 128, CPU-CPU io_link type 1 weight 32 | [CPX] |
| system_properties | platform_oem/id/rev of [CPX] (generation_id 80 in CPX) | [CPX] |
| CPX location_id | (bus << 8) + partition | [CPX] 1280..1287 for bus 05; [KRN] kfd_topology.c |
| render minors | GPU g partition p = 128 + 8g + p; SPX node uses 128 + 8g | [CPX] 128..190; [KRN] amdgpu_xcp.c always registers 8 DRM devices per MI300 GPU; ROCm/rocDecode PR 38 ("renderD128 for GPU0, renderD136 for GPU1") |
| CPX simd_id_base | 2147488064 + 40 per node | [CPX] |
| io_links GPU to CPU | type 2, weight 20, max_bandwidth 64000, sdma mask 3, flags 1 (CPU side flags 3) | [CPX] |
| io_links in CPX | same GPU: type 11 weight 13, bandwidth 819200; other GPU: type 11 weight 41, bandwidth 0 | [CPX]; [KRN] kfd_crat.c (13 = intra-socket, 41 = 2 x 13 + 15) |
| io_links in SPX | type 11, weight 15 (15 x 1 hop), 50000/50000 MB/s, sdma mask from rec_sdma_eng_map | [KRN] kfd_crat.c, kfd_topology.c; the real MI210 capture shows 50000; public `rocm-smi --showtopo` of 8-GPU MI3xx nodes shows weight 15, 1 hop |
| p2p links | GPU to the other CPU: type 2, weight 52; CPU to far GPUs: weight 52, flags 3 | real MI210 capture (`../real/k8s-device-plugin/topo-mi210-xgmi-pcie`); [CPX] counts |
| VRAM | mem_info_vram_total 206141652992 (192 GiB - 16 MiB) | [SMI] rocminfo pool 201310208 KB |
| CPX partition VRAM | KFD mem bank 25767706624 = total / 8 | [KRN] KFD_XCP_MEMORY_SIZE (uncertain, see below) |
| HBM vendor | samsung | [SMI] |
| VBIOS, product, serials 0-3 | 113-MI3SRIOV-001, "AMD Instinct MI300X OAM", 692347006052 / ...894 / ...047 / ...902 | [SMI] |
| temperatures, power GPUs 0-3 | junction 35/37/34/39, mem 33/34/32/36 degC, 133/130/131/136 W | [SMI] |
| power cap | 750 W (power1_cap, _max, _default); power1_cap_min 0 | [SMI] "Max Graphics Package Power (W): 750.0"; [KRN] smu_v13_0_6_get_power_limit |
| DPM tables | sclk 500/2100, mclk 900/1100/1300, fclk 1300/1550/1800, socclk 889/1000/1143 | [SMI] "Supported clock frequencies" |
| DPM text format | `S: <f>Mhz *` deep sleep line below 140 MHz (GPUs 1 and 3 sclk, idle socclk/vclk/dclk); sclk `0: min / 1: cur * / 2: max` or `0: min \n1: max *`; other clocks `%d: %uMhz %s` (trailing space on non-current lines) | [SMI] shows both sclk forms; [KRN] smu_v13_0_6_print_clk_levels / print_clks |
| absent files | no pp_dpm_pcie, no pp_dpm_dcefclk, no pp_power_profile_mode, no hwmon temp1 (edge), in0/in1, power1_average, fans | [KRN] amdgpu_pm.c (gc 9.4.3 cases); [SMI] "get_power_profiles, Not supported", fan "Not supported" |
| hwmon | temp2 junction, temp3 mem (+crit, crit_hyst -273150, emergency), power1_input (socket power, uW), power1_cap*, freq1 sclk / freq2 mclk (Hz) | [KRN] hwmon_attributes_visible, amdgpu_hwmon_get_power |
| partitions | current_compute_partition SPX/CPX, available "SPX, DPX, QPX, CPX", NPS1, available "NPS1, NPS4" | NOTES 1 and 5 ([KRN] amdgpu_gfx.c, amdgpu_gmc.c) |
| firmware files | fw_version/<ip>_fw_version "0x%08x"; names as in the real lact/rx6900xt capture; smc 0x00555b00, sos 0x0036024b, ta_ras 0x2000000c, ta_xgmi 0x20000113, vcn 0x0611300c, rlc 63 | [SMI] (rocm-smi prints smc/ta as dotted decimal bytes); mec/mec2 177 and sdma/sdma2 24 follow [CPX] so KFD and sysfs agree ([SMI] machine had 138 / 19) |
| gpu_metrics | v1.6, 1664-byte layout, memset 0xFF then filled; units degC, W, %, MHz, energy in 2^-16 J (15.259 uJ), pcie speed 0.1 GT/s, firmware_timestamp 10 ns; num_partition 1 / 8; xcp_stats[0] holds 8 XCCs in SPX, xcp_stats[i] one XCC each in CPX | `../../../shared/reference/gpu_metrics_structs.h`; NOTES 2; [KRN] smu_v13_0_6_get_gpu_metrics |
| not in v1.6 | no edge temperature field, no HBM-stack temperature array, no fclk field | gpu_metrics_structs.h (so nothing is written for them) |
| XCP devices | card(8g+p) device/uevent `MODALIAS=platform:amdgpu_xcp` (platform device amdgpu_xcp.N, N = 7g + p - 1, no driver bound, no PCI_ID) | [KRN] amdgpu_xcp.c (platform_device_register_simple("amdgpu_xcp", N)); ROCm/k8s-device-plugin issue 157 shows /sys/devices/platform/amdgpu_xcp.38/drm/renderD172 |
| fdinfo | `drm-driver`, `drm-pdev` (the parent GPU's BDF, also for partition render nodes), `drm-client-id`, `drm-memory-vram/gtt/cpu` in KiB (note "gtt: \\t"), `drm-engine-compute/dma` in ns | [FIX]; [KRN] amdgpu_fdinfo.c, amdgpu_xcp.c |
| KFD proc files | pasid, vram_<gpuid>, sdma_<gpuid> with newline; queues/<qid>/{gpuid,type,size} WITHOUT newline; type 0 compute, 1 sdma, 4 sdma_xgmi | [KRN] kfd_process.c |
| module | sys/module/amdgpu/initstate "live", no version file | task brief |

Invented values **[MADE]**: live values of GPUs 4-7 (busy), all vrsoc temperatures, vclk/dclk level
tables, junction/memory crit and emergency limits (100/110 and 95/105 degC), serial numbers of GPUs
4-7, product_number, manufacturer, fru_id, xgmi_device_id, KFD gpu_id values, power cap 600 W on
GPU 6 and its performance level "manual", "perf_determinism" on GPU 7, a PCIe replay count of 3 on
GPU 6, GTT size (half of the [SMI] system RAM), CPU mem bank width/clock, local_cpulist, hwmon
numbers, all gpu_metrics accumulators, timestamps and XGMI counters, the representative KFD cache
entries, and all processes.

## Deliberate differences from a naive picture (read before writing tests)

- **Card numbering.** The 8 GPUs are card0, card8, ..., card56 (renderD128, 136, ... 184). amdgpu
  registers 7 `amdgpu_xcp` platform DRM devices after each MI300 GPU **in every mode**, so cards
  8g+1..8g+7 exist in SPX too. Readers must skip them (no PCI_ID in device/uevent) rather than assume
  card0..card7 are the GPUs.
- **CPX KFD values are the real ones.** Nodes 2-64 of the CPX capture reproduce the real capture
  byte for byte (properties and io_links); only io_links_count (63 -> 64) and the CPU p2p count change,
  because node 65 (GPU 7 partition 7, missing in the real capture) is filled in.
- **Cross-GPU XGMI weight** is 41 in CPX (real) and 15 in SPX; bandwidth 0 between partitions of
  different GPUs in CPX (real).
- **caches/ and p2p_links/ folders** are written only in SPX (5 representative caches per node:
  vector L1 32 KB, instruction L1 64 KB, scalar L1 16 KB, L2, L3 256 MB; caches_count 5). The CPX
  capture keeps the real caches_count 80 and p2p_links_count but, like the real CPX capture, has no
  caches/ or p2p_links/ folders (this also keeps the size down).
- **No /proc/<pid>/fd/ links** (flat capture): DRM fds are recognised by `drm-driver: amdgpu` in
  fdinfo. Process 48213 has two fds with the same drm-client-id (a dup): count it once.
  Process 60011 has render fds but no KFD entry and no memory.

## Size

The CPX topology needs about 4,200 io_link folders (64 x 64 links). On ext4 each folder counts
4096 bytes in `du --apparent-size`, so the CPX capture measures about 20.6 MB there although its
files hold only about 1.3 MB. The SPX capture measures about 2.1 MB.

## rocm-smi 5.2.3 as an oracle

Laid out as a live tree (symlinks, cards renumbered card0..7), AMD's rocm-smi 5.2.3 fails
`rsmi_init` because MI300 hwmon has no `in0_label`. With one added to a throwaway copy it agrees with
`expected.json` on device id, unique id, bus, junction/memory temperature, VRAM/GTT, power cap, serial,
VBIOS, memory vendor, performance level and firmware strings. It aborts on gpu_metrics v1.6 and does
not know the XCP card layout or `power1_input`.

## Uncertain (documented guesses)

- CPX per-partition VRAM (total / 8) and the CPX L2 size (4096 KB; SPX uses the rocminfo 32768 KB).
- SPX: num_sdma_xgmi_engines 14, num_cp_queues 24, XGMI bandwidth 50000 MB/s (newer kernels may
  derive it from the link speed), the cache list, weight/flags of p2p links.
- The deep-sleep threshold (140 MHz here; early smu_v13_0_6 code used 100).
- Thermal limits, vclk/dclk tables and everything marked [MADE].
"""

if __name__ == "__main__":
    sys.exit(main())
