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

Code (all in captures/tools/): this file is the command line, main() and the top README.md text;
mi300x_model.py holds the facts and the model, mi300x_build.py builds a capture in memory,
mi300x_check.py is --check.  The names make_mi300x_faults.py uses (import make_mi300x as M) are
imported here as well.
"""

import argparse
import os
import shutil
import sys

SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))
if SCRIPT_DIR not in sys.path:
    sys.path.insert(0, SCRIPT_DIR)
sys.dont_write_bytecode = True   # leave captures/tools/__pycache__ alone

# The names marked "for make_mi300x_faults.py" are unused here: that generator reads them as M.<name>.
from mi300x_model import (  # noqa: E402
    CPU_PROP_KEYS, CPX, GPU_PROP_KEYS, SPX,
    # for make_mi300x_faults.py
    GM_FIELDS, GM_SIZE, NUM_GPUS, bdf, card_index, decode_gpu_metrics)
from mi300x_build import build, compact_json  # noqa: E402  (compact_json: for make_mi300x_faults.py)
from mi300x_check import check_capture, parse_dpm, real_property_keys  # noqa: E402  (parse_dpm: ditto)


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
