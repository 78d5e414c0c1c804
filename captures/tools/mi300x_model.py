"""The constructed 8x AMD Instinct MI300X node: documented facts and the model built from them.

Part of make_mi300x.py (the command line); this file holds
  - the facts, each tagged with its source ([CPX], [SMI], [KRN], [MADE]; see the Facts comment
    below and captures/constructed/README.md): PCI ids, buses, KFD unique ids, VRAM/GTT sizes,
    clock tables, firmware versions, live per-GPU values, the processes, KFD property key lists,
    the gpu_metrics v1.6 layout;
  - helpers: bdf/card/render-minor numbering, KFD gpu_id and XGMI node ids, sysfs text formats
    (properties, pp_dpm_* clock tables), Tree (the in-memory file set);
  - the model: KFD nodes, GPU node properties, caches, io links, per-GPU VRAM/GTT use, XCC busy,
    and the gpu_metrics encoder/decoder.
mi300x_build.py turns these into files and expected.json; mi300x_check.py re-reads them.
Python 3 standard library only, deterministic.
"""

import hashlib
import os
import struct

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
         spx=[dict(gpu=7, vram=165888, gtt=1024, compute=3620118441906, dma=9120344017,
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
