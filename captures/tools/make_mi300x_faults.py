#!/usr/bin/env python3
"""Generate the CONSTRUCTED (not recorded) capture mi300x-8gpu-faults: the 8x MI300X SPX/NPS1 node
of make_mi300x.py with RAS files on every GPU and exactly one planted fault per GPU.

  <out>/mi300x-8gpu-faults/     sys/, proc/, expected.json, README.md

The node is rebuilt in memory by make_mi300x.build("spx") (same files, byte for byte), then:
  * every PCI GPU gets device/ras/{umc,gfx,sdma,mmhub,pcie_bif,xgmi_wafl,hdp}_err_count,
    device/ras/features and device/ras/gpu_vram_bad_pages;
  * sys/module/amdgpu/parameters/bad_page_threshold is written (10: the threshold is global);
  * one fault per GPU (GPU = PCI card in BDF order, card0 = GPU 0) is planted, see FAULTS below.
expected.json = the SPX expected.json (same keys, with the values the faults change) plus, per
card, the fault, the RAS and bad-page values in catalogue units and the expected health verdict.

Usage (Python 3 standard library only, deterministic output):
  python3 captures/tools/make_mi300x_faults.py captures/constructed          # (re)generate
  python3 captures/tools/make_mi300x_faults.py --check captures/constructed  # re-read, compare
  (--check also accepts the capture folder itself.)
"""

import argparse
import json
import os
import re
import shutil
import struct
import sys

SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, SCRIPT_DIR)
sys.dont_write_bytecode = True   # leave captures/tools/__pycache__ alone
import make_mi300x as M  # noqa: E402  (the healthy node and the gpu_metrics v1.6 encoder)
import mi300x_check  # noqa: E402  (its check_capture() reads SPX from this module)

CAPTURE = "mi300x-8gpu-faults"
GENERATOR = "captures/tools/make_mi300x_faults.py"

# --------------------------------------------------------------------------------------------
# RAS facts.  [KRN] = drivers/gpu/drm/amd/amdgpu/amdgpu_ras.c (read for this work in public
# kernel trees / amd-gfx patches); [NOTES] = shared/reference/NOTES.md section 1; [MADE] invented.
# --------------------------------------------------------------------------------------------
# ras_block_string[] names and enum amdgpu_ras_block bit numbers [KRN] (amdgpu_ras.h):
# UMC 0, SDMA 1, GFX 2, MMHUB 3, ATHUB 4, PCIE_BIF 5, HDP 6, XGMI_WAFL 7, DF 8, ...
RAS_BLOCKS = [("umc", 0), ("gfx", 2), ("sdma", 1), ("mmhub", 3), ("pcie_bif", 5),
              ("xgmi_wafl", 7), ("hdp", 6)]
# ras/features: amdgpu_ras_sysfs_features_read() prints "feature mask: 0x%x\n" of con->features,
# a BIT(block) mask of the enabled RAS blocks [KRN].  The mask used here is [MADE]: exactly the
# seven blocks written above (0xef); a real MI300X may enable more (e.g. VCN, JPEG, MP0/MP1).
RAS_FEATURES = sum(1 << bit for _, bit in RAS_BLOCKS)
# <block>_err_count: amdgpu_ras_(aca_)sysfs_read(): "ue: %lu\nce: %lu\nde: %lu\n" on MI300
# (ACA path; older kernels and non-ACA blocks print only ue/ce; later kernels print de for umc
# only), "Query currently inaccessible\n" while amdgpu_ras_get_error_query_ready() is false [KRN].
ERR_COUNT_FMT = "ue: %d\nce: %d\nde: %d\n"
INACCESSIBLE = "Query currently inaccessible\n"
# gpu_vram_bad_pages: amdgpu_ras_sysfs_badpages_read(): "0x%08x : 0x%08x : %1s\n" of
# (retired page frame number, AMDGPU_GPU_PAGE_SIZE, R|P|F) [KRN]; empty when there are none.
BAD_PAGE_FMT = "0x%08x : 0x%08x : %s\n"
GPU_PAGE_SIZE = 4096              # [KRN] AMDGPU_GPU_PAGE_SIZE; frame << 12 = byte address
STATE_LETTER = {"reserved": "R", "pending": "P", "failed": "F"}
# /sys/module/amdgpu/parameters/bad_page_threshold: module_param int, "%d\n"; -1 = driver
# computes it, -2 = ignore [KRN]/[NOTES].  Brief: 10 on this node (global for all GPUs).
BAD_PAGE_THRESHOLD = 10

# --------------------------------------------------------------------------------------------
# Health check ids (the health engine uses exactly these) and the thresholds this capture's
# margins were built against: the HealthPolicy defaults of smi-lib/include/hipstack/smi.hpp as
# written by the health-engine work (uncommitted when this was made), applied by evaluate() below.
# Verdicts: PASS, WARN, FAIL, UNKNOWN (could not be evaluated; never counts towards overall).
# --------------------------------------------------------------------------------------------
CHECK_IDS = ["thermal.temperature", "thermal.throttling", "power.at_cap", "power.throttling",
             "clocks.stuck_low", "pcie.link_degraded", "pcie.replays", "memory.uncorrectable_ecc",
             "memory.correctable_ecc", "memory.bad_pages_pending", "memory.bad_page_threshold",
             "ras.unreadable"]
POLICY = dict(thermal_margin=5.0, throttle_share=0.10, power_cap_share=0.98, busy_for_clock_check=90.0,
              clock_low_share=0.5, correctable_ecc=1000, pcie_replays=1000, bad_page_share=0.9)
THROTTLE_REASONS = {"thermal.throttling": ["prochot_residency_acc", "socket_thm_residency_acc",
                                           "vr_thm_residency_acc", "hbm_thm_residency_acc"],
                    "power.throttling": ["ppt_residency_acc"]}
THRESHOLDS = {
    "thermal.temperature": "FAIL if junction (temp2) or memory (temp3) >= its *_crit; WARN if >= *_crit - "
                           "thermal_margin (5 degC)",
    "thermal.throttling": "WARN if the largest of prochot / socket_thm / vr_thm / hbm_thm_residency_acc "
                          "divided by accumulation_counter >= throttle_share (10 %) (gpu_metrics)",
    "power.at_cap": "WARN if power1_input >= power_cap_share (98 %) of power1_cap",
    "power.throttling": "WARN if ppt_residency_acc / accumulation_counter >= throttle_share (10 %)",
    "clocks.stuck_low": "WARN if gpu_busy_percent >= busy_for_clock_check (90) and the current sclk < "
                        "clock_low_share (0.5) x max sclk (2100 MHz)",
    "pcie.link_degraded": "WARN if current_link_speed < max_link_speed or current_link_width < max_link_width",
    "pcie.replays": "WARN if pcie_replay_count >= pcie_replays (1000)",
    "memory.uncorrectable_ecc": "FAIL if a RAS block has ue > 0",
    "memory.correctable_ecc": "WARN if the sum of ce over the RAS blocks >= correctable_ecc (1000)",
    "memory.bad_pages_pending": "WARN if gpu_vram_bad_pages lists a P (pending) page",
    "memory.bad_page_threshold": "FAIL if a page is F (failed to retire) or the bad pages (R + P + F) >= "
                                 "bad_page_threshold (a count; -1 driver default / -2 ignore are not); "
                                 "WARN if >= bad_page_share (90 %) of it",
    "ras.unreadable": "UNKNOWN (never WARN or FAIL) naming the blocks whose ras/<block>_err_count reads "
                      "'Query currently inaccessible'; PASS (or no finding) when all blocks were read",
}
MARGINS = [
    "GPU 0: with xgmi_wafl unreadable, memory.uncorrectable_ecc / memory.correctable_ecc are PASS over the "
    "six readable blocks (all 0); an engine that needs every block for the totals may say UNKNOWN "
    "instead (expected_health.also_acceptable). Neither may WARN or FAIL, and overall stays PASS.",
    "GPU 3 has 5 bad pages of threshold 10 (3 if pending pages are not counted): below the 90 % WARN level.",
    "GPU 4 reaches memory.bad_page_threshold FAIL twice over: 10 pages >= 10 and one F page.",
    "GPU 5's 1500 replays are 1.5x the 1000 threshold; GPU 6's healthy 3 replays stay PASS.",
    "GPU 7's healthy hbm_thm_residency_acc (321 of 6912347, 0.005 %) stays PASS; throttling uses the "
    "largest single reason (a sum of reasons gives the same verdicts here).",
    "GPU 1's ce 14 is far below 1000; GPU 2's 25000 far above.",
    "Other GPUs' power is at most 71.7 % of their cap (GPU 5: 538 of 750 W); no GPU is >= 90 % busy "
    "below 1050 MHz (GPU 4 2100, GPU 5 1923, GPU 7 2087 MHz).",
]

# Bad pages: (frame, state), in the order the driver lists them (data->bps insertion order).
# Frame numbers [MADE]; all below VRAM_TOTAL >> 12 = 0x02fff000.
GPU3_PAGES = [(0x00b41f02, "reserved"), (0x00b41f03, "reserved"), (0x012c7a80, "reserved"),
              (0x01d0e514, "pending"), (0x01d0e515, "pending")]
GPU4_PAGES = [(0x0003a1c0, "reserved"), (0x0003a1c1, "reserved"), (0x004e2d38, "reserved"),
              (0x0071f604, "reserved"), (0x0071f605, "reserved"), (0x00a90c6e, "reserved"),
              (0x0133b2f0, "reserved"), (0x01e46a19, "reserved"), (0x02a70d52, "reserved"),
              (0x02b18c07, "failed")]

# One fault per GPU.  Keys: fault (name), detail, health (expected non-PASS checks), and the
# planted values: ras {block: (ue, ce, de)}, unreadable [blocks], pages [(frame, state)],
# link (speed GT/s, width), replay, tj (degC), socket_thm_pct, power (W), ppt_pct.
FAULTS = [
    dict(fault="ras_unreadable", unreadable=["xgmi_wafl"],
         detail="healthy (all RAS counts 0, no bad pages) except ras/xgmi_wafl_err_count, which reads "
                "'Query currently inaccessible': the health check must report the block as unreadable, "
                "not fail",
         health={"ras.unreadable": "UNKNOWN"},
         also_acceptable={"memory.uncorrectable_ecc": ["UNKNOWN"], "memory.correctable_ecc": ["UNKNOWN"]}),
    dict(fault="uncorrectable_ecc", ras={"umc": (2, 14, 0)},
         detail="umc ue 2, ce 14", health={"memory.uncorrectable_ecc": "FAIL"}),
    dict(fault="high_correctable_ecc", ras={"umc": (0, 25000, 0)},
         detail="umc ce 25000, ue 0", health={"memory.correctable_ecc": "WARN"}),
    dict(fault="bad_pages_pending", pages=GPU3_PAGES,
         detail="5 bad pages: 3 reserved (R), 2 pending (P); pending pages are retired only when their "
                "allocation is freed or after a GPU reset / driver reload",
         health={"memory.bad_pages_pending": "WARN"}),
    dict(fault="bad_page_threshold", pages=GPU4_PAGES,
         detail="10 bad pages (9 reserved, 1 failed F) = bad_page_threshold 10",
         health={"memory.bad_page_threshold": "FAIL"}),
    dict(fault="pcie_link_degraded", link=(16.0, 8), replay=1500,
         detail="PCIe link trained at 16.0 GT/s x8 (max 32.0 GT/s x16), also in gpu_metrics "
                "pcie_link_speed/width; pcie_replay_count and gpu_metrics pcie_replay_count_acc 1500",
         health={"pcie.link_degraded": "WARN", "pcie.replays": "WARN"}),
    dict(fault="thermal", tj=98, socket_thm_pct=40,
         detail="junction 98 degC (hwmon temp2_input 98000, gpu_metrics temperature_hotspot 98) with "
                "temp2_crit 100 degC; gpu_metrics socket_thm_residency_acc = 40 % of "
                "accumulation_counter",
         health={"thermal.temperature": "WARN", "thermal.throttling": "WARN"}),
    dict(fault="power_cap", power=748, ppt_pct=60,
         detail="socket power 748 W (hwmon power1_input 748000000 uW, gpu_metrics curr_socket_power 748) "
                "with power1_cap 750 W; gpu_metrics ppt_residency_acc = 60 % of accumulation_counter",
         health={"power.at_cap": "WARN", "power.throttling": "WARN"}),
]
assert len(FAULTS) == M.NUM_GPUS

GM = {name: (code, count, off) for name, code, count, off in M.GM_FIELDS}


def pct_of(acc, pct):
    """Residency counter for pct % of acc (integer, rounded down)."""
    return acc * pct // 100


def patch_gpu_metrics(blob, **fields):
    buf = bytearray(blob)
    for name, value in fields.items():
        code, count, off = GM[name]
        assert count == 1, name
        struct.pack_into("<" + code, buf, off, value)
    assert len(buf) == M.GM_SIZE
    return bytes(buf)


def link_speed_text(gts):
    return "%.1f GT/s PCIe\n" % gts


# --------------------------------------------------------------------------------------------
# build
# --------------------------------------------------------------------------------------------
def build():
    t = M.build("spx")
    base_files = dict(t.files)
    exp = json.loads(t.files.pop("expected.json").decode("ascii"))
    t.files.pop("README.md")
    changed = {}                  # path -> why (files that differ from the healthy SPX node)

    def put(path, data, why):
        if isinstance(data, str):
            data = data.encode("ascii")
        assert all(32 < ord(c) < 127 for c in path), path
        t.files[path] = data
        if base_files.get(path) != data:
            changed[path] = why

    exp["_meta"].update(
        capture=CAPTURE, generator=GENERATOR, base_capture=M.SPX,
        note="CONSTRUCTED, not recorded. The SPX/NPS1 node of %s (same files) with RAS files on every GPU "
             "and one planted fault per GPU. Top-level 'cardN' keys are the 8 PCI GPUs (GPU g = card8g, "
             "BDF order); each has the SPX keys (with the values the fault changes) plus fault, "
             "fault_detail, ras, ras_unreadable_blocks, ras_features, bad_pages, bad_page_threshold and "
             "expected_health." % M.SPX,
        ras_units={"ras": "error counts per block (catalogue ras_uncorrectable / ras_correctable / "
                          "ras_deferred); null = block unreadable",
                   "bad_pages": "frame = page frame number as printed (catalogue BadPage.frame), "
                                "address = frame * 4096 in bytes, size in bytes, state reserved | "
                                "pending | failed (R | P | F)",
                   "ecc_*_volatile": "sum over the RAS blocks; null when a block is unreadable"},
        health_check_ids=CHECK_IDS, health_thresholds=THRESHOLDS, health_margins=MARGINS,
        health_policy=POLICY,
        health_statuses="PASS, WARN, FAIL, UNKNOWN (could not be evaluated); overall = the worst of PASS / "
                        "WARN / FAIL, UNKNOWN findings do not count; ras.unreadable PASS may appear as no "
                        "finding at all; also_acceptable lists other verdicts a correct engine may give",
        changed_files="changed_files: files that differ from a fresh make_mi300x.py SPX build (every other "
                      "file is byte-identical to it); the ras/ files and the module parameter are new")

    put("sys/module/amdgpu/parameters/bad_page_threshold", "%d\n" % BAD_PAGE_THRESHOLD,
        "bad_page_threshold module parameter (new)")
    exp["node"]["bad_page_threshold"] = BAD_PAGE_THRESHOLD

    for g, F in enumerate(FAULTS):
        cname = "card%d" % M.card_index(g)
        e = exp[cname]
        assert e["bdf"] == M.bdf(g) and e["gpu_index"] == g
        d = "sys/class/drm/%s/device/" % cname
        h = d + "hwmon/%s/" % e["hwmon"]
        gm_path = d + "gpu_metrics"
        blob = t.files[gm_path]
        acc = M.decode_gpu_metrics(blob)["accumulation_counter"]
        gm_patch = {}

        # ---- RAS ----
        ras = {}
        for block, _ in RAS_BLOCKS:
            path = d + "ras/%s_err_count" % block
            if block in F.get("unreadable", []):
                put(path, INACCESSIBLE, "ras (new), planted: unreadable")
                ras[block] = None
                continue
            ue, ce, de = F.get("ras", {}).get(block, (0, 0, 0))
            put(path, ERR_COUNT_FMT % (ue, ce, de),
                "ras (new)" + (", planted" if block in F.get("ras", {}) else ""))
            ras[block] = dict(ue=ue, ce=ce, de=de)
        put(d + "ras/features", "feature mask: 0x%x\n" % RAS_FEATURES, "ras (new)")
        pages = F.get("pages", [])
        put(d + "ras/gpu_vram_bad_pages",
            "".join(BAD_PAGE_FMT % (fr, GPU_PAGE_SIZE, STATE_LETTER[st]) for fr, st in pages),
            "ras (new)" + (", planted" if pages else ""))
        readable = [v for v in ras.values() if v is not None]
        all_read = len(readable) == len(ras)
        e["ras"] = ras
        e["ras_unreadable_blocks"] = [b for b, v in ras.items() if v is None]
        e["ras_features"] = dict(mask="0x%x" % RAS_FEATURES,
                                 enabled_blocks=sorted((b for b, _ in RAS_BLOCKS), key=lambda b: dict(RAS_BLOCKS)[b]))
        e["ecc_uncorrected_volatile"] = sum(v["ue"] for v in readable) if all_read else None
        e["ecc_corrected_volatile"] = sum(v["ce"] for v in readable) if all_read else None
        e["ecc_deferred_volatile"] = sum(v["de"] for v in readable) if all_read else None
        e["bad_pages"] = [dict(frame=fr, address=fr * GPU_PAGE_SIZE, size=GPU_PAGE_SIZE, state=st)
                          for fr, st in pages]
        for st in ("reserved", "pending", "failed"):
            e["bad_pages_" + st] = sum(1 for _, s in pages if s == st)
        e["bad_page_threshold"] = BAD_PAGE_THRESHOLD

        # ---- PCIe ----
        if "link" in F:
            speed, width = F["link"]
            put(d + "current_link_speed", link_speed_text(speed), "planted: degraded link speed")
            put(d + "current_link_width", "%d\n" % width, "planted: degraded link width")
            e["pcie_link_speed"], e["pcie_link_width"] = speed, width
            gm_patch.update(pcie_link_speed=int(round(speed * 10)), pcie_link_width=width)
        if "replay" in F:
            put(d + "pcie_replay_count", "%d\n" % F["replay"], "planted: replays")
            e["pcie_replay_count"] = F["replay"]
            gm_patch.update(pcie_replay_count_acc=F["replay"])
        # ---- thermal ----
        if "tj" in F:
            put(h + "temp2_input", "%d\n" % (F["tj"] * 1000), "planted: junction temperature")
            e["temperature_junction"] = float(F["tj"])
            gm_patch.update(temperature_hotspot=F["tj"])
        if "socket_thm_pct" in F:
            gm_patch.update(socket_thm_residency_acc=pct_of(acc, F["socket_thm_pct"]))
        # ---- power ----
        if "power" in F:
            put(h + "power1_input", "%d\n" % (F["power"] * 1000000), "planted: socket power")
            e["power_current"] = float(F["power"])
            gm_patch.update(curr_socket_power=F["power"])
        if "ppt_pct" in F:
            gm_patch.update(ppt_residency_acc=pct_of(acc, F["ppt_pct"]))
        if gm_patch:
            blob = patch_gpu_metrics(blob, **gm_patch)
            put(gm_path, blob, "planted: gpu_metrics " + ", ".join(sorted(gm_patch)))
        e["gpu_metrics"] = json.loads(json.dumps(M.decode_gpu_metrics(t.files[gm_path])))

        checks = {c: F["health"].get(c, "PASS") for c in CHECK_IDS}
        assert set(F["health"]) <= set(CHECK_IDS)
        e["fault"] = F["fault"]
        e["fault_detail"] = F["detail"]
        e["expected_health"] = dict(
            overall=worst(checks.values()),
            failing_checks=[c for c in CHECK_IDS if checks[c] == "FAIL"],
            warning_checks=[c for c in CHECK_IDS if checks[c] == "WARN"],
            unknown_checks=[c for c in CHECK_IDS if checks[c] == "UNKNOWN"],
            checks=checks, also_acceptable=F.get("also_acceptable", {}))
        e["changed_files"] = sorted(p for p in changed if p.startswith(d))

    exp["changed_files_node"] = sorted(p for p in changed if not p.startswith("sys/class/drm/"))
    exp["faults"] = {("card%d" % M.card_index(g)): dict(gpu_index=g, bdf=M.bdf(g), fault=F["fault"],
                                                       overall=exp["card%d" % M.card_index(g)]["expected_health"]["overall"])
                     for g, F in enumerate(FAULTS)}
    # ---- self-consistency: the reference evaluator, run on the files, gives expected_health ----
    files = t.files
    for g in range(M.NUM_GPUS):
        cname = "card%d" % M.card_index(g)
        got = evaluate(lambda rel: files[rel], cname, exp[cname]["hwmon"])
        assert got["checks"] == exp[cname]["expected_health"]["checks"], (cname, got)
    t.files["README.md"] = capture_readme(exp).encode("ascii")
    t.files["expected.json"] = (M.compact_json(exp) + "\n").encode("ascii")
    return t, exp


def worst(statuses):
    """Overall verdict: the worst of PASS / WARN / FAIL; UNKNOWN findings do not count."""
    order = ["PASS", "WARN", "FAIL"]
    known = [s for s in statuses if s in order]
    return max(known, key=order.index) if known else "UNKNOWN"


# --------------------------------------------------------------------------------------------
# reference health evaluator: reads only the files (read(rel) -> bytes)
# --------------------------------------------------------------------------------------------
def parse_err_count(text):
    """None if the block is unreadable, else {ue, ce, de} (de 0 when absent)."""
    if "inaccessible" in text:
        return None
    kv = {}
    for line in text.splitlines():
        k, v = line.split(":", 1)
        kv[k.strip()] = int(v.strip())
    return dict(ue=kv["ue"], ce=kv["ce"], de=kv.get("de", 0))


BAD_PAGE_RE = re.compile(r"^0x([0-9a-f]{8}) : 0x([0-9a-f]{8}) : ([RPF])$")


def parse_bad_pages(text):
    out = []
    for line in text.splitlines():
        m = BAD_PAGE_RE.match(line)
        if not m:
            raise ValueError("bad gpu_vram_bad_pages line %r" % line)
        frame, size = int(m.group(1), 16), int(m.group(2), 16)
        state = {"R": "reserved", "P": "pending", "F": "failed"}[m.group(3)]
        out.append(dict(frame=frame, address=frame * GPU_PAGE_SIZE, size=size, state=state))
    return out


def evaluate(read, cname, hwmon):
    """The health checks of CHECK_IDS with POLICY, from the files only."""
    P = POLICY
    txt = lambda rel: read(rel).decode("ascii")
    num = lambda rel: int(txt(rel))
    d = "sys/class/drm/%s/device/" % cname
    h = d + "hwmon/%s/" % hwmon
    gm = M.decode_gpu_metrics(read(d + "gpu_metrics"))
    acc = gm["accumulation_counter"]
    c = {}
    worst_t = "PASS"
    for n in (2, 3):
        cur, crit = num(h + "temp%d_input" % n) / 1000.0, num(h + "temp%d_crit" % n) / 1000.0
        s = "FAIL" if cur >= crit else "WARN" if cur >= crit - P["thermal_margin"] else "PASS"
        worst_t = worst([worst_t, s])
    c["thermal.temperature"] = worst_t
    for check, reasons in THROTTLE_REASONS.items():
        share = max(gm[r] for r in reasons) / acc
        c[check] = "WARN" if share >= P["throttle_share"] else "PASS"
    power, cap = num(h + "power1_input"), num(h + "power1_cap")
    c["power.at_cap"] = "WARN" if cap > 0 and power >= P["power_cap_share"] * cap else "PASS"
    _, sclk = M.parse_dpm(txt(d + "pp_dpm_sclk"))
    sclk_max = max(l["mhz"] for l in M.parse_dpm(txt(d + "pp_dpm_sclk"))[0] if l["level"] != "S")
    busy = num(d + "gpu_busy_percent")
    c["clocks.stuck_low"] = ("WARN" if busy >= P["busy_for_clock_check"] and sclk < P["clock_low_share"] * sclk_max
                             else "PASS")
    cs, ms = float(txt(d + "current_link_speed").split()[0]), float(txt(d + "max_link_speed").split()[0])
    cw, mw = num(d + "current_link_width"), num(d + "max_link_width")
    c["pcie.link_degraded"] = "WARN" if cs < ms or cw < mw else "PASS"
    c["pcie.replays"] = "WARN" if num(d + "pcie_replay_count") >= P["pcie_replays"] else "PASS"
    blocks = {b: parse_err_count(txt(d + "ras/%s_err_count" % b)) for b, _ in RAS_BLOCKS}
    readable = [v for v in blocks.values() if v is not None]
    c["memory.uncorrectable_ecc"] = "FAIL" if any(v["ue"] > 0 for v in readable) else "PASS"
    c["memory.correctable_ecc"] = "WARN" if sum(v["ce"] for v in readable) >= P["correctable_ecc"] else "PASS"
    pages = parse_bad_pages(txt(d + "ras/gpu_vram_bad_pages"))
    c["memory.bad_pages_pending"] = "WARN" if any(p["state"] == "pending" for p in pages) else "PASS"
    thr = num("sys/module/amdgpu/parameters/bad_page_threshold")
    if any(p["state"] == "failed" for p in pages) or (thr > 0 and len(pages) >= thr):
        c["memory.bad_page_threshold"] = "FAIL"
    elif thr > 0 and len(pages) >= P["bad_page_share"] * thr:
        c["memory.bad_page_threshold"] = "WARN"
    else:
        c["memory.bad_page_threshold"] = "PASS"
    c["ras.unreadable"] = "UNKNOWN" if len(readable) < len(blocks) else "PASS"
    return dict(checks={k: c[k] for k in CHECK_IDS}, blocks=blocks, pages=pages, threshold=thr,
                overall=worst(c.values()))


# --------------------------------------------------------------------------------------------
# README of the capture
# --------------------------------------------------------------------------------------------
def capture_readme(exp):
    rows = []
    for g in range(M.NUM_GPUS):
        cname = "card%d" % M.card_index(g)
        e = exp[cname]
        eh = e["expected_health"]
        found = ", ".join("%s %s" % (k, v) for k, v in eh["checks"].items() if v != "PASS")
        rows.append("| %d | %s | %s | %s | %s | %s |" % (g, cname, e["bdf"], e["fault"], eh["overall"], found))
    thr = "\n".join("| `%s` | %s |" % (k, v) for k, v in THRESHOLDS.items())
    return """\
# mi300x-8gpu-faults (CONSTRUCTED, not recorded)

This folder was **generated by `captures/tools/make_mi300x_faults.py`**. No MI300X was recorded and no
fault was observed: it is the constructed 8x MI300X SPX/NPS1 node of `../mi300x-8gpu-spx-nps1/` (rebuilt by
`make_mi300x.py`, every other file byte-identical to it) with RAS files added to every GPU and **one
planted fault per GPU**. Use it to test readers and the health checks; never cite it as a measurement.

GPU g is the PCI card `card{8g}` (BDF order; `card{8g+1..8g+7}` are amdgpu_xcp devices, not GPUs).

| GPU | card | BDF | fault | expected overall | expected findings (every other check PASS) |
|---|---|---|---|---|---|
%s

Planted values:

- GPU 0: all RAS counts 0, no bad pages, but `ras/xgmi_wafl_err_count` reads `Query currently inaccessible`.
- GPU 1: `ras/umc_err_count` = `ue: 2` / `ce: 14` / `de: 0`.
- GPU 2: `ras/umc_err_count` = `ue: 0` / `ce: 25000` / `de: 0`.
- GPU 3: `ras/gpu_vram_bad_pages`: 3 reserved (R) and 2 pending (P) pages.
- GPU 4: 9 reserved (R) and 1 failed (F) page; `bad_page_threshold` = 10 (global module parameter, so
  every GPU has threshold 10; the others have 0 or 5 pages).
- GPU 5: `current_link_speed` `16.0 GT/s PCIe`, `current_link_width` `8` (max 32.0 GT/s x16); gpu_metrics
  `pcie_link_speed` 160, `pcie_link_width` 8; `pcie_replay_count` and gpu_metrics `pcie_replay_count_acc` 1500.
- GPU 6: hwmon `temp2_input` 98000 (`temp2_crit` 100000), gpu_metrics `temperature_hotspot` 98,
  `socket_thm_residency_acc` = 40 %% of `accumulation_counter` (rounded down).
- GPU 7: hwmon `power1_input` 748000000 uW (`power1_cap` 750000000), gpu_metrics `curr_socket_power` 748,
  `ppt_residency_acc` = 60 %% of `accumulation_counter` (rounded down).

## Files added to every GPU (`sys/class/drm/card{8g}/device/ras/`) and to the node

| file | format | source |
|---|---|---|
| `{umc,gfx,sdma,mmhub,pcie_bif,xgmi_wafl,hdp}_err_count` | `ue: N\\nce: N\\nde: N\\n`, or `Query currently inaccessible\\n` | amdgpu_ras.c `amdgpu_ras_aca_sysfs_read` / `amdgpu_ras_sysfs_read` (the `de` line: MI300 ACA path; later kernels print it for umc only); NOTES.md 1 |
| `features` | `feature mask: 0x%%x\\n`, here `feature mask: 0x%x` = BIT(block) of the 7 blocks above | amdgpu_ras.c `amdgpu_ras_sysfs_features_read`; the mask itself is MADE |
| `gpu_vram_bad_pages` | one line per page `0x%%08x : 0x%%08x : R|P|F` (frame, 0x00001000, state); empty file when none | amdgpu_ras.c `amdgpu_ras_sysfs_badpages_read`; NOTES.md 1 |
| `sys/module/amdgpu/parameters/bad_page_threshold` | `%%d\\n`, here `10` (-1 = driver computes it, -2 = ignore) | amdgpu_drv.c module parameter; NOTES.md 1 |

Bad page frame numbers are MADE (below 0x02fff000 = VRAM / 4 KiB).

## Expected health (the thresholds the planted values were built against)

`expected.json` cards carry `fault`, `fault_detail`, `ras` (per block, null = unreadable), `bad_pages`
(`frame` as printed, `address` = frame x 4096 bytes, `size` bytes, `state`), `bad_page_threshold`,
`ecc_*_volatile` (null when a block is unreadable) and `expected_health` (`overall`, `failing_checks`,
`warning_checks`, `unknown_checks`, `checks` with all 12 ids, and `also_acceptable`: other verdicts a
correct engine may give). Verdicts are PASS, WARN, FAIL and UNKNOWN (could not be evaluated; it does not
count towards `overall`). The generator's reference evaluator reads only the files and applies the
`HealthPolicy` defaults of `smi-lib/include/hipstack/smi.hpp` (thermal_margin 5, throttle_share 0.10,
power_cap_share 0.98, busy_for_clock_check 90, clock_low_share 0.5, correctable_ecc 1000,
pcie_replays 1000, bad_page_share 0.9):

| check | rule |
|---|---|
%s

Margins a health engine must respect to give exactly these verdicts:

%s

Check the files against `expected.json` (also re-runs make_mi300x.py's SPX checks, compares every file
not listed in `changed_files` with a fresh SPX build, and re-evaluates the health checks from the files):

    python3 captures/tools/make_mi300x_faults.py --check captures/constructed
""" % ("\n".join(rows), RAS_FEATURES, thr, "\n".join("- " + m for m in MARGINS))


# --------------------------------------------------------------------------------------------
# --check
# --------------------------------------------------------------------------------------------
def check(root):
    real_keys, src = M.real_property_keys()
    # 1. every SPX check of make_mi300x.py against this capture's expected.json
    saved = mi300x_check.SPX
    mi300x_check.SPX = CAPTURE    # check_capture() picks SPX mode from _meta.capture
    try:
        ck = M.check_capture(root, real_keys)
    finally:
        mi300x_check.SPX = saved
    exp = json.load(open(os.path.join(root, "expected.json")))
    read = lambda rel: open(os.path.join(root, rel), "rb").read()
    # 2. the fault capture is a fresh SPX build except for the files listed as changed
    base = M.build("spx")
    listed = set(exp["changed_files_node"])
    cards = sorted((k for k in exp if re.match(r"^card\d+$", k)), key=lambda k: int(k[4:]))
    for cname in cards:
        listed |= set(exp[cname]["changed_files"])
    on_disk = set()
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            on_disk.add(os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/"))
    base_paths = set(base.files) - {"README.md", "expected.json"}
    ck.eq("files of the SPX node all present", sorted(base_paths - on_disk), [])
    ck.eq("extra files are listed as changed", sorted(on_disk - base_paths - listed - {"README.md", "expected.json"}), [])
    for p in sorted(base_paths & on_disk):
        same = read(p) == base.files[p]
        ck.eq("%s %s the SPX build" % (p, "differs from" if p in listed else "equals"), same, p not in listed)
    ck.eq("bad_page_threshold file", read("sys/module/amdgpu/parameters/bad_page_threshold"),
          b"%d\n" % exp["node"]["bad_page_threshold"])
    # 3. RAS files, bad pages, health, per card
    for g, cname in enumerate(cards):
        e = exp[cname]
        d = "sys/class/drm/%s/device/" % cname
        ck.eq(cname + " is GPU %d" % g, (e["gpu_index"], e["bdf"]), (g, M.bdf(g)))
        rasdir = os.path.join(root, d + "ras")
        ck.eq(cname + " ras/ files", sorted(os.listdir(rasdir)),
              sorted(["%s_err_count" % b for b, _ in RAS_BLOCKS] + ["features", "gpu_vram_bad_pages"]))
        for b, _ in RAS_BLOCKS:
            text = read(d + "ras/%s_err_count" % b).decode("ascii")
            ok = text == INACCESSIBLE or re.match(r"^ue: \d+\nce: \d+\nde: \d+\n$", text)
            ck.eq(cname + " ras/%s_err_count format" % b, bool(ok), True)
            ck.eq(cname + " ras " + b, parse_err_count(text), e["ras"][b])
        ck.eq(cname + " unreadable blocks", [b for b, _ in RAS_BLOCKS
                                              if parse_err_count(read(d + "ras/%s_err_count" % b).decode()) is None],
              e["ras_unreadable_blocks"])
        feat = read(d + "ras/features").decode("ascii")
        ck.eq(cname + " ras/features format", bool(re.match(r"^feature mask: 0x[0-9a-f]+\n$", feat)), True)
        ck.eq(cname + " ras/features", feat.split(":")[1].strip(), e["ras_features"]["mask"])
        mask = int(feat.split(":")[1], 16)
        ck.eq(cname + " ras/features blocks", [b for b, bit in sorted(RAS_BLOCKS, key=lambda x: x[1]) if mask >> bit & 1],
              e["ras_features"]["enabled_blocks"])
        pages_text = read(d + "ras/gpu_vram_bad_pages").decode("ascii")
        try:
            pages = parse_bad_pages(pages_text)
        except ValueError as err:
            ck.fail("%s %s" % (cname, err))
            pages = []
        ck.eq(cname + " bad pages", pages, e["bad_pages"])
        for st in ("reserved", "pending", "failed"):
            ck.eq(cname + " bad_pages_" + st, sum(1 for p in pages if p["state"] == st), e["bad_pages_" + st])
        ck.eq(cname + " bad page frames below VRAM", all(p["address"] + p["size"] <= e["vram_total"] for p in pages), True)
        blocks = [parse_err_count(read(d + "ras/%s_err_count" % b).decode()) for b, _ in RAS_BLOCKS]
        all_read = all(v is not None for v in blocks)
        for key, field in (("ecc_uncorrected_volatile", "ue"), ("ecc_corrected_volatile", "ce"),
                           ("ecc_deferred_volatile", "de")):
            ck.eq(cname + " " + key, sum(v[field] for v in blocks) if all_read else None, e[key])
        ck.eq(cname + " bad_page_threshold", e["bad_page_threshold"], exp["node"]["bad_page_threshold"])
        try:
            got = evaluate(read, cname, e["hwmon"])
        except (ValueError, KeyError, OSError, ZeroDivisionError) as err:
            ck.fail("%s health evaluation failed on the files: %r" % (cname, err))
            continue
        eh = e["expected_health"]
        ck.eq(cname + " health checks (reference evaluator on the files)", got["checks"], eh["checks"])
        ck.eq(cname + " overall", got["overall"], eh["overall"])
        ck.eq(cname + " failing_checks", [c for c in CHECK_IDS if got["checks"][c] == "FAIL"], eh["failing_checks"])
        ck.eq(cname + " warning_checks", [c for c in CHECK_IDS if got["checks"][c] == "WARN"], eh["warning_checks"])
        ck.eq(cname + " unknown_checks", [c for c in CHECK_IDS if got["checks"][c] == "UNKNOWN"], eh["unknown_checks"])
        ck.eq(cname + " exactly one fault, with findings", bool(e["fault"]) and
              any(v != "PASS" for v in eh["checks"].values()), True)
        ck.eq(cname + " faults index", exp["faults"][cname]["fault"], e["fault"])
        # the planted gpu_metrics values agree with the text files
        gm = M.decode_gpu_metrics(read(d + "gpu_metrics"))
        ck.eq(cname + " gpu_metrics pcie width vs current_link_width", gm["pcie_link_width"],
              int(read(d + "current_link_width")))
        ck.eq(cname + " gpu_metrics replay acc vs pcie_replay_count", gm["pcie_replay_count_acc"],
              int(read(d + "pcie_replay_count")))
    # 4. the planted faults are the brief's
    F = {c: exp[c] for c in cards}
    c0, c1, c2, c3, c4, c5, c6, c7 = cards
    ck.eq("GPU0 xgmi_wafl unreadable", F[c0]["ras_unreadable_blocks"], ["xgmi_wafl"])
    ck.eq("GPU1 umc", F[c1]["ras"]["umc"], dict(ue=2, ce=14, de=0))
    ck.eq("GPU2 umc", F[c2]["ras"]["umc"], dict(ue=0, ce=25000, de=0))
    ck.eq("GPU3 pages", [p["state"] for p in F[c3]["bad_pages"]], ["reserved"] * 3 + ["pending"] * 2)
    ck.eq("GPU4 pages", [p["state"] for p in F[c4]["bad_pages"]], ["reserved"] * 9 + ["failed"])
    ck.eq("threshold", exp["node"]["bad_page_threshold"], 10)
    ck.eq("GPU5 link", (read("sys/class/drm/%s/device/current_link_speed" % c5),
                        read("sys/class/drm/%s/device/current_link_width" % c5), F[c5]["pcie_replay_count"]),
          (b"16.0 GT/s PCIe\n", b"8\n", 1500))
    ck.eq("GPU5 gpu_metrics link", (F[c5]["gpu_metrics"]["pcie_link_speed"], F[c5]["gpu_metrics"]["pcie_link_width"]), (160, 8))
    h6 = "sys/class/drm/%s/device/hwmon/%s/" % (c6, F[c6]["hwmon"])
    ck.eq("GPU6 temp2", (read(h6 + "temp2_input"), read(h6 + "temp2_crit")), (b"98000\n", b"100000\n"))
    gm6 = F[c6]["gpu_metrics"]
    ck.eq("GPU6 socket_thm 40 %", gm6["socket_thm_residency_acc"], gm6["accumulation_counter"] * 40 // 100)
    h7 = "sys/class/drm/%s/device/hwmon/%s/" % (c7, F[c7]["hwmon"])
    ck.eq("GPU7 power", (read(h7 + "power1_input"), read(h7 + "power1_cap")), (b"748000000\n", b"750000000\n"))
    gm7 = F[c7]["gpu_metrics"]
    ck.eq("GPU7 ppt 60 %", gm7["ppt_residency_acc"], gm7["accumulation_counter"] * 60 // 100)
    # 5. expected.json is what the generator writes now (deterministic, derived from the same values)
    _, fresh = build()
    ck.eq("expected.json equals a fresh build", exp, json.loads(json.dumps(fresh)))
    print("%s: %d checks, %d errors (property keys from %s)" % (CAPTURE, ck.checked, len(ck.errors), src))
    for err in ck.errors[:50]:
        print("  ERROR " + err)
    return 1 if ck.errors else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir", help="output folder, e.g. captures/constructed (with --check: it, or the capture)")
    ap.add_argument("--check", action="store_true", help="re-read the capture and compare with expected.json")
    args = ap.parse_args()
    if args.check:
        root = args.outdir
        if not os.path.exists(os.path.join(root, "expected.json")):
            root = os.path.join(root, CAPTURE)
        return check(root)
    t, _ = build()
    target = os.path.join(args.outdir, CAPTURE)
    if os.path.isdir(target):
        shutil.rmtree(target)
    t.write(target)
    print("%s: %d files" % (target, len(t.files)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
