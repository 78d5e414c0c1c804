#!/usr/bin/env python3
"""Compare what AMD's rocm-smi 5.2.3 printed with what hipstack-smi printed.

  compare.py [options] ROCM_JSON HIPSTACK_JSON [HIPSTACK_JSON ...]
  compare.py --self-test

ROCM_JSON is run_rocm_smi.sh's output ({"card0": {rocm-smi key: string}, ...});
its notes file (ROCM_JSON.notes, written next to it) says which fields
tools/live_tree.py --for-rocm-smi had to repair or synthesize for rocm-smi:
those fields are excluded unless --include-fixed is given.  HIPSTACK_JSON are
`hipstack-smi metric --json` / `hipstack-smi static --json` outputs (schema
hipstack-smi/v1); several are merged per device (matched by BDF, else index).

For every rocm-smi field that has a hipstack equivalent it prints one row
    field | rocm-smi | hipstack | agree
then the rocm-smi fields it knowingly excludes (with the reason) and the ones it
has no mapping for (so the map can grow).  Exit status: 0 all mapped fields
agree, 1 any disagreement (or a field rocm-smi reports that hipstack lacks,
unless --allow-missing, or fewer than --min-compared fields compared), 2 usage /
input error.  Python 3 standard library only.

A floor on the compared fields (default MIN_COMPARED = 10 per run, that is per
capture; the 16 amdgpu captures compare 13 (r9-280) to 72 each, docs/testing.md): a run
that compares nothing, because rocm-smi printed nothing usable, the devices did
not match or the map lost its fields, fails instead of agreeing vacuously.
"""

import argparse
import copy
import fnmatch
import json
import os
import re
import sys
import tempfile

import precedence
from field_map import (EXCLUDED, MAP, SYSTEM_EXCLUDED, _na, h_hexint, h_pcie, p_fw, p_hexint,
                       p_mhz, p_numa, p_pcie)

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------

def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def parse_notes(path):
    """-> (drm card -> bdf, list of (bdf or card, patterns, line))"""
    cards, fixes = {}, []
    if not path or not os.path.exists(path):
        return cards, fixes
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^CARD (card\d+) (\S+) driver=", line)
            if m:
                cards[m.group(1)] = m.group(2).lower()
                continue
            m = re.match(r"^(FIX|SYNTH) (card\d+) .* affects=(\S+)\s*$", line)
            # Stripping NUL padding keeps the file's value: what rocm-smi then reads is still the
            # capture's fact, so those fields stay compared (hipstack reads the padded files).
            if m and "NUL padding" in line:
                continue
            if m:
                pats = [p for p in m.group(3).split(",") if p and p != "none"]
                if pats:
                    fixes.append((m.group(2), pats, line))
    resolved = [(cards.get(c, c), pats, line) for c, pats, line in fixes]
    return cards, resolved


def merge_hipstack(docs):
    """Merge several hipstack-smi/v1 documents per device (key: bdf, else index)."""
    devs = {}
    order = []
    for doc in docs:
        if doc.get("schema") not in (None, "hipstack-smi/v1"):
            raise ValueError("unknown hipstack schema %r" % doc.get("schema"))
        for d in doc.get("devices", []):
            key = (d.get("bdf") or "").lower() or "index:%s" % d.get("index")
            if key not in devs:
                devs[key] = {k: v for k, v in d.items() if k != "metrics"}
                devs[key]["metrics"] = {}
                order.append(key)
            tgt = devs[key]
            for k, v in d.items():
                if k != "metrics" and k not in tgt:
                    tgt[k] = v
            for name, m in (d.get("metrics") or {}).items():
                old = tgt["metrics"].get(name)
                if old is None:
                    tgt["metrics"][name] = copy.deepcopy(m)
                elif "instances" in m and "instances" in old:
                    old["instances"].update(m["instances"])
                elif m.get("status") == "ok" or old.get("status") != "ok":
                    tgt["metrics"][name] = copy.deepcopy(m)
    return [devs[k] for k in order]


class HVal:
    """A hipstack metric (instance) as found: state in ok / not_supported / <status> / absent."""

    def __init__(self, state, value=None, shown=""):
        self.state, self.value, self.shown = state, value, shown


def hipstack_value(dev, metric, instance, rocm_dev=None):
    metrics = dev.get("metrics") or {}
    m = metrics.get(metric)
    if m is None and instance is None and metric in dev and metric != "metrics":
        return HVal("ok", dev[metric], str(dev[metric]))
    if m is None:
        return HVal("absent", None, "(absent)")
    if instance is not None:
        inst = m.get("instances")
        if inst is None:
            st = m.get("status", "no instances")
            return HVal(st if st != "ok" else "absent", None, "(%s)" % st)
        if instance == "@current":
            # the level rocm-smi calls current: the index it printed
            instance = rocm_dev.get("__pcie_current") if rocm_dev else None
        m = inst.get(str(instance))
        if m is None:
            return HVal("absent", None, "(no instance %s)" % instance)
    st = m.get("status", "ok" if "value" in m else "absent")
    if st != "ok":
        return HVal(st, None, "(%s)" % st)
    v = m.get("value")
    return HVal("ok", v, json.dumps(v) if not isinstance(v, str) else v)


def glob_match(pats, metric):
    return any(fnmatch.fnmatchcase(metric, p) for p in pats)


# ---------------------------------------------------------------------------
# comparison
# ---------------------------------------------------------------------------

class Row:
    def __init__(self, dev, field, metric, rocm, hip, status, note=""):
        self.dev, self.field, self.metric = dev, field, metric
        self.rocm, self.hip, self.status, self.note = rocm, hip, status, note


FAIL_STATES = {"DISAGREE", "MISSING", "NO-DEVICE"}
COMPARED_STATES = {"agree", "DISAGREE"}  # fields both tools reported and this script compared
MIN_COMPARED = 10


def classify_key(key):
    for rx, why in EXCLUDED:
        if rx.match(key):
            return ("excluded", why)
    for rx, fn in MAP:
        m = rx.match(key)
        if m:
            return ("mapped", fn(m))
    return ("unmapped", None)


def fold_fine_grained(rdev, info, card):
    """A known, deliberate difference: SMU11+ fine-grained clocks print "0: min / 1: current * /
    2: max". When the starred middle line lies outside [min, max] it is not a DPM level, and hipstack
    reports levels {0: min, 2: max} (the numbers sysfs printed) with the middle value as the current
    clock (compared through "<clk> clock speed:"). rocm-smi lists the three lines as levels; drop its
    line 1 the same way."""
    for clk in ("sclk", "mclk", "fclk", "socclk", "dcefclk", "vclk", "dclk"):
        keys = ["Supported %s frequencies: %d" % (clk, i) for i in range(4)]
        if not all(k in rdev for k in keys[:3]) or keys[3] in rdev:
            continue
        vals = [p_mhz(rdev[k]) for k in keys[:3]]
        starred = ["*" in str(rdev[k]) for k in keys[:3]]
        if None in vals or starred != [False, True, False]:
            continue
        lo, mid, hi = vals
        if lo <= hi and (mid < lo or mid > hi):
            rdev.pop(keys[1])
            info.append("%s: %s table is fine-grained min/current/max (current %s MHz outside "
                        "[%s, %s]): rocm-smi's line 1 is the current clock, not a level" % (card, clk, mid, lo, hi))


def expand_lists(rdev):
    """rocm-smi 6+ prints a per-instance gpu_metrics field as a JSON list: one key "name [i]" each."""
    out = {}
    for key, value in rdev.items():
        if isinstance(value, list):
            for i, one in enumerate(value):
                out["%s [%d]" % (key, i)] = one
        else:
            out[key] = value
    return out


def partition_parent(bdf, hip_devs):
    """The hipstack GPU whose compute partition `bdf` is (same slot, function 1 .. partitions - 1), or None."""
    if not re.match(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[1-7]$", bdf or ""):
        return None
    for d in hip_devs:
        hbdf = (d.get("bdf") or "").lower()
        if hbdf[:-1] == bdf[:-1] and hbdf.endswith(".0") and int(bdf[-1], 16) < (d.get("partitions") or 1):
            return d
    return None


# A partition device's fields that are the partition's own (hipstack-smi partition), by the GPU
# metric rocm-smi's field maps to; the rest (ids, gfx target, unique id) are its GPU's.
PARTITION_OWN = {"vram_total": "partition_memory", "kfd_gpu_id": "partition_kfd_gpu_id"}


def partition_device(parent, bdf):
    """The hipstack view rocm-smi's device for partition `bdf` is compared with: the GPU's metrics,
    with the partition's own where it has them (PARTITION_OWN) and its BDF; None without the
    partition list (`hipstack-smi partition --json`)."""
    part = next((p for p in parent.get("partition_list") or [] if (p.get("bdf") or "").lower() == bdf), None)
    if part is None:
        return None
    metrics = dict(parent.get("metrics") or {})
    for gpu_metric, own in PARTITION_OWN.items():
        metrics[gpu_metric] = (part.get("metrics") or {}).get(own, {"status": "not_supported"})
    metrics["bdf"] = {"status": "ok", "value": part.get("bdf")}  # the partition's PCI function, as hipstack lists it
    return dict(parent, bdf=bdf, metrics=metrics)


def compare(rocm, hip_devs, notes_path=None, include_fixed=False, allow_missing=False, capture=None):
    """-> (rows, excluded {key: why}, unmapped {key: example}, info lines)"""
    _, fixes = parse_notes(notes_path)
    rows, excluded, unmapped, info = [], {}, {}, []
    rocm_cards = sorted((k for k in rocm if re.match(r"^card\d+$", k)), key=lambda k: int(k[4:]))
    for k in rocm:
        if k == "system":
            for sk in rocm[k]:
                excluded[sk] = SYSTEM_EXCLUDED.get(sk, "system-wide, no per-device hipstack metric")
        elif k not in rocm_cards:
            info.append("ignoring top-level rocm-smi key %r" % k)
    by_bdf = {(d.get("bdf") or "").lower(): d for d in hip_devs if d.get("bdf")}
    used = set()
    for pos, card in enumerate(rocm_cards):
        rdev = expand_lists(rocm[card])
        fold_fine_grained(rdev, info, card)
        bdf = (rdev.get("PCI Bus") or "").strip().lower()
        hdev = by_bdf.get(bdf) if bdf else None
        how = "bdf %s" % bdf
        if hdev is None:
            # by order, among hipstack devices not matched otherwise
            rest = [d for d in sorted(hip_devs, key=lambda d: d.get("index", 0)) if id(d) not in used
                    and (not d.get("bdf") or d.get("bdf", "").lower() not in
                         {(rocm[c].get("PCI Bus") or "").lower() for c in rocm_cards})]
            hdev = rest[0] if rest else None
            how = "order (rocm-smi %s has %s)" % (card, "BDF " + bdf if bdf else "no PCI Bus")
        if hdev is None:
            parent = partition_parent(bdf, hip_devs)
            if parent is not None:
                # rocm-smi 6 and later list each compute partition as a device of its own (its PCI
                # function); hipstack lists it under its GPU (hipstack-smi partition).
                hdev = partition_device(parent, bdf)
                if hdev is None:  # no `hipstack-smi partition --json` given: named, not compared
                    rows.append(Row(card, "(device)", "-", bdf, "GPU %s" % parent.get("index"), "partition",
                                    "compute partition %s of hipstack's GPU %s (%s)"
                                    % (int(bdf[-1], 16), parent.get("index"), parent.get("bdf"))))
                    continue
                how = "partition %s of GPU %s" % (int(bdf[-1], 16), parent.get("index"))
            else:
                rows.append(Row(card, "(device)", "-", bdf or card, "(none)", "NO-DEVICE",
                                "hipstack has no device for it"))
                continue
        if not how.startswith("partition "):
            used.add(id(hdev))
        hbdf = (hdev.get("bdf") or "").lower()
        dname = "%s=%s" % (card, hbdf or "index %s" % hdev.get("index"))
        info.append("rocm-smi %s <-> hipstack device %s (%s) matched by %s"
                    % (card, hdev.get("index"), hbdf or "?", how))
        dev_fixes = [(p, line) for who, p, line in fixes if who in (hbdf, bdf)]
        # the pcie level rocm-smi calls current
        pcl = rdev.get("pcie clock level")
        rdev = dict(rdev)
        if pcl:
            mm = re.match(r"^\s*(\d+)", pcl)
            rdev["__pcie_current"] = mm.group(1) if mm else None
        for key in sorted(k for k in rdev if not k.startswith("__")):
            raw = rdev[key]
            kind, spec = classify_key(key)
            if kind == "excluded":
                excluded[key] = spec
                continue
            if kind == "unmapped":
                unmapped.setdefault(key, raw)
                continue
            metric, inst, rparse, hnorm, eq, note = spec
            mname = metric + ("[%s]" % (rdev.get("__pcie_current") if inst == "@current" else inst)
                              if inst is not None else "")
            try:
                rv = rparse(raw)
            except (ValueError, TypeError):
                rows.append(Row(dname, key, mname, raw, "", "DISAGREE", "cannot parse rocm-smi value"))
                continue
            if key in ("Card vendor", "Card Vendor") and rv is None and not _na(raw):
                excluded[key] = "rocm-smi printed a vendor name (pci.ids present), not the id"
                continue
            hv = hipstack_value(hdev, metric, inst, rdev)
            fixed = [line for p, line in dev_fixes if glob_match(p, metric)]
            if fixed and not include_fixed:
                rows.append(Row(dname, key, mname, raw, hv.shown, "excluded-fix",
                                fixed[0].split(" affects=")[0]))
                continue
            if hv.state == "ok":
                try:
                    hn = hnorm(hv.value)
                except (ValueError, TypeError):
                    hn = None
            else:
                hn = None
            if rv is None:
                if hv.state == "ok":
                    st, why = "rocm-na", "rocm-smi prints N/A, hipstack has a value"
                else:
                    st, why = "agree", "both unavailable"
            elif hv.state == "absent":
                st, why = ("missing-ok" if allow_missing else "MISSING"), "hipstack does not report it"
            elif hv.state != "ok":
                st, why = "DISAGREE", "hipstack says %s" % hv.state
            elif hn is None:
                st, why = "DISAGREE", "cannot interpret hipstack value"
            else:
                st, why = ("agree", note) if eq(rv, hn) else ("DISAGREE", note)
            if st == "DISAGREE":
                # hipstack's documented source precedence, accepted only with the capture's evidence
                reason = precedence.explain(metric, rv, hv.state, hv.value, hdev, capture)
                if reason:
                    st, why = ("upstream" if reason.startswith("upstream:") else "precedence"), reason
            if fixed:
                why = (why + "; " if why else "") + "compared although repaired for rocm-smi"
            rows.append(Row(dname, key, mname, raw, hv.shown, st, why))
    return rows, excluded, unmapped, info


def render(rows, excluded, unmapped, info, out=sys.stdout, verbose=True):
    def w(s=""):
        out.write(s + "\n")
    for line in info:
        w("# " + line)
    hdr = ("device", "rocm-smi field", "hipstack metric", "rocm-smi", "hipstack", "agree", "note")
    table = [hdr] + [(r.dev, r.field, r.metric, str(r.rocm), str(r.hip), r.status, r.note) for r in rows]
    cap = [22, 44, 28, 22, 22, 12, 60]
    widths = [min(cap[i], max(len(t[i]) for t in table)) for i in range(len(hdr))]

    def fmt(t):
        cells = []
        for i, c in enumerate(t):
            c = c if len(c) <= widths[i] or i == len(t) - 1 else c[:widths[i] - 1] + "…"
            cells.append(c.ljust(widths[i]) if i < len(t) - 1 else c)
        return " | ".join(cells).rstrip()
    w(fmt(hdr))
    w("-+-".join("-" * x for x in widths))
    for t in table[1:]:
        w(fmt(t))
    counts = {}
    for r in rows:
        counts[r.status] = counts.get(r.status, 0) + 1
    w("")
    w("summary: " + ", ".join("%s %d" % kv for kv in sorted(counts.items())))
    if verbose and excluded:
        w("")
        w("rocm-smi fields excluded on purpose:")
        for k in sorted(excluded):
            w("  %-44s %s" % (k, excluded[k]))
    if unmapped:
        w("")
        w("rocm-smi fields with no hipstack mapping (grow MAP in field_map.py):")
        for k in sorted(unmapped):
            w("  %-44s e.g. %s" % (k, unmapped[k]))


def run(rocm_path, hip_paths, notes=None, include_fixed=False, allow_missing=False, out=sys.stdout, capture=None,
        min_compared=MIN_COMPARED):
    rocm = load_json(rocm_path)
    hip = merge_hipstack([load_json(p) for p in hip_paths])
    if notes is None:
        notes = rocm_path + ".notes"
    rows, excl, unm, info = compare(rocm, hip, notes, include_fixed, allow_missing, capture)
    render(rows, excl, unm, info, out)
    bad = [r for r in rows if r.status in FAIL_STATES]
    compared = sum(1 for r in rows if r.status in COMPARED_STATES)
    if compared < min_compared:
        print("FAIL: %d field(s) compared, fewer than the floor of %d: nothing this thin may pass as agreement"
              % (compared, min_compared), file=out)
        return 1, rows, excl, unm
    print("%d fields compared (floor %d)" % (compared, min_compared), file=out)
    return (1 if bad else 0), rows, excl, unm


# ---------------------------------------------------------------------------
# self test
# ---------------------------------------------------------------------------

def self_test():
    import io
    rocm_p = os.path.join(HERE, "rocm-smi-5.2.3", "rx7900xtx.json")
    hip_p = os.path.join(HERE, "sample-hipstack-rx7900xtx.json")
    failures = []

    def check(cond, what):
        print("%s %s" % ("ok  " if cond else "FAIL", what))
        if not cond:
            failures.append(what)

    # parsers
    check(p_fw("00.58.86.00") == 0x003A5600, "SMC firmware 00.58.86.00 == 0x003a5600")
    check(p_fw("\t0x0211a000") == 0x0211A000, "VCN firmware hex")
    check(p_fw("\t\t37") == 37, "CE firmware decimal")
    check(p_numa("4294967295") == -1, "numa affinity 4294967295 == -1")
    check(p_pcie("0 (16.0GT/s x16)") == (16.0, 16), "pcie clock level parse")
    check(h_pcie("16.0GT/s, x16 619Mhz *") == (16.0, 16), "pp_dpm_pcie text parse")
    check(p_mhz("(1249Mhz)") == 1249.0 and p_mhz("1 (31Mhz)") == 31.0, "MHz parse")
    check(p_hexint("0x946d7e1ef9b172dd") == h_hexint("946d7e1ef9b172dd"), "unique id hex")
    check(classify_key("Driver version")[0] == "excluded", "driver version excluded")
    check(classify_key("GPU OverDrive value (%)")[0] == "unmapped", "OD value unmapped")

    # rocm-smi 6+ lists compute partitions as devices: a partition row only under a hipstack GPU
    # that has that many partitions (hipstack-smi partition), else hipstack lacks the device
    gpu = {"index": 0, "bdf": "0000:05:00.0", "partitions": 8, "metrics": {}}
    check(partition_parent("0000:05:00.3", [gpu]) is gpu, "a partition's function under its GPU")
    check(partition_parent("0000:05:00.3", [dict(gpu, partitions=1)]) is None, "no partition beyond the GPU's count")
    check(partition_parent("0000:06:00.3", [gpu]) is None and partition_parent("0000:05:00.0", [gpu]) is None,
          "another slot, or function 0, is no partition")
    two = {"card0": {"PCI Bus": "0000:05:00.0"}, "card1": {"PCI Bus": "0000:05:00.1"}}
    rows_p, _, _, _ = compare(two, [gpu])
    check([r.status for r in rows_p if r.dev == "card1"] == ["partition"], "a partitioned GPU's function 1 is a partition row")
    rows_p, _, _, _ = compare(two, [dict(gpu, partitions=1)])
    check([r.status for r in rows_p if r.dev == "card1"] == ["NO-DEVICE"], "an unpartitioned GPU's function 1 is NO-DEVICE")
    # with hipstack's partition list, a partition device is compared: its own memory and BDF
    listed = dict(gpu, partition_list=[{"index": 1, "bdf": "0000:05:00.1", "metrics": {
        "partition_memory": {"status": "ok", "value": 25767706624}}}])
    part = {"card0": {"PCI Bus": "0000:05:00.0"},
            "card1": {"PCI Bus": "0000:05:00.1", "VRAM Total Memory (B)": "25767706624"}}
    rows_p, _, _, _ = compare(part, [listed])
    check({r.field: r.status for r in rows_p if r.dev.startswith("card1")}
          == {"PCI Bus": "agree", "VRAM Total Memory (B)": "agree"}, "a partition's BDF and memory are its own")
    part["card1"]["VRAM Total Memory (B)"] = "206141652992"  # the whole GPU's
    rows_p, _, _, _ = compare(part, [listed])
    check(any(r.field == "VRAM Total Memory (B)" and r.status == "DISAGREE" for r in rows_p),
          "a partition device showing the whole GPU's memory disagrees")

    # the real rocm-smi output against the hand-made hipstack JSON
    buf = io.StringIO()
    rc, rows, excl, unm = run(rocm_p, [hip_p], out=buf)
    text = buf.getvalue()
    print(text)
    agree = [r for r in rows if r.status == "agree"]
    check(rc == 0, "rx7900xtx sample: every mapped field agrees (rc %d)" % rc)
    check(len(agree) >= 20, "rx7900xtx sample: %d fields compared and agree (>= 20)" % len(agree))
    for f in ("Temperature (Sensor edge) (C)", "Average Graphics Package Power (W)", "Voltage (mV)",
              "Supported sclk frequencies: 2", "sclk clock speed:", "PCI Bus", "VBIOS version",
              "Performance Level", "Max Graphics Package Power (W)", "pcie clock level"):
        check(any(r.field == f and r.status == "agree" for r in rows), "compared and agrees: %s" % f)
    check("GPU OverDrive value (%)" in unm, "unmapped list names 'GPU OverDrive value (%)'")
    check("Card SKU" in excl and "Driver version" in excl, "excluded list names Card SKU, Driver version")

    # merging several hipstack files (static + metric) gives the same answer
    doc = load_json(hip_p)
    static_names = {"vbios_version", "pci_vendor_id", "pci_device_id", "power_cap", "sclk_level",
                    "mclk_level", "socclk_level", "pcie_level"}
    a, b = copy.deepcopy(doc), copy.deepcopy(doc)
    for d in a["devices"]:
        d["metrics"] = {k: v for k, v in d["metrics"].items() if k in static_names}
    for d in b["devices"]:
        d["metrics"] = {k: v for k, v in d["metrics"].items() if k not in static_names}
    with tempfile.TemporaryDirectory() as td:
        pa, pb = os.path.join(td, "static.json"), os.path.join(td, "metric.json")
        for p, dd in ((pa, a), (pb, b)):
            with open(p, "w") as f:
                json.dump(dd, f)
        rc2, rows2, _, _ = run(rocm_p, [pa, pb], notes=rocm_p + ".notes", out=io.StringIO())
        check(rc2 == 0 and len([r for r in rows2 if r.status == "agree"]) == len(agree),
              "two hipstack files merged give the same result")

        # a wrong value is caught
        bad = copy.deepcopy(doc)
        bad["devices"][0]["metrics"]["temperature_edge"]["value"] += 1.0
        bad["devices"][0]["metrics"]["sclk_level"]["instances"]["2"]["value"] = 2200.0
        pbad = os.path.join(td, "bad.json")
        with open(pbad, "w") as f:
            json.dump(bad, f)
        rc3, rows3, _, _ = run(rocm_p, [pbad], notes=rocm_p + ".notes", out=io.StringIO())
        dis = {r.field for r in rows3 if r.status == "DISAGREE"}
        # (rocm-smi's fine-grained "0: min / 1: current * / 2: max" is folded: its line 1 is no level)
        check(rc3 == 1 and dis == {"Temperature (Sensor edge) (C)", "Supported sclk frequencies: 2"},
              "wrong edge temperature and sclk max level are reported (%s)" % sorted(dis))

        # hipstack saying not_supported where rocm-smi has a value is a disagreement
        ns = copy.deepcopy(doc)
        ns["devices"][0]["metrics"]["voltage_gfx"] = {"status": "not_supported"}
        del ns["devices"][0]["metrics"]["gpu_busy"]
        pns = os.path.join(td, "ns.json")
        with open(pns, "w") as f:
            json.dump(ns, f)
        rc4, rows4, _, _ = run(rocm_p, [pns], notes=rocm_p + ".notes", out=io.StringIO())
        st = {r.field: r.status for r in rows4}
        check(rc4 == 1 and st.get("Voltage (mV)") == "DISAGREE" and st.get("GPU use (%)") == "MISSING",
              "not_supported -> DISAGREE, absent -> MISSING")
        rc5, _, _, _ = run(rocm_p, [pns], notes=rocm_p + ".notes", allow_missing=True, out=io.StringIO())
        check(rc5 == 1, "--allow-missing still fails on the not_supported voltage")

        # a field repaired for rocm-smi is excluded (notes), unless --include-fixed
        notes = os.path.join(td, "n.notes")
        with open(notes, "w") as f:
            f.write("CARD card0 0000:03:00.0 driver=amdgpu\n"
                    "FIX card0 pp_dpm_sclk removed deep-sleep line(s) 'S: 19Mhz *' "
                    "affects=sclk_level,clock_sclk,clock_sclk_max\n")
        rc6, rows6, _, _ = run(rocm_p, [pbad], notes=notes, out=io.StringIO())
        st6 = {r.field: r.status for r in rows6}
        check(st6.get("Supported sclk frequencies: 2") == "excluded-fix"
              and st6.get("sclk clock speed:") == "excluded-fix"
              and st6.get("Temperature (Sensor edge) (C)") == "DISAGREE",
              "notes FIX line excludes the sclk fields only")
        rc7, rows7, _, _ = run(rocm_p, [pbad], notes=notes, include_fixed=True, out=io.StringIO())
        check(any(r.field == "Supported sclk frequencies: 2" and r.status == "DISAGREE" for r in rows7),
              "--include-fixed compares them again")

        # matching by order when rocm-smi printed no PCI Bus
        r2 = load_json(rocm_p)
        for k in r2:
            if k.startswith("card"):
                r2[k].pop("PCI Bus", None)
        pr2 = os.path.join(td, "rocm-nobus.json")
        with open(pr2, "w") as f:
            json.dump(r2, f)
        buf8 = io.StringIO()
        rc8, rows8, _, _ = run(pr2, [hip_p], notes=rocm_p + ".notes", out=buf8)
        check(rc8 == 0 and "matched by order" in buf8.getvalue(), "devices matched by order without PCI Bus")

        # a clock that differs from rocm-smi's starred line is 'precedence' only with the capture's
        # evidence (rx7900xtx hwmon freq1_input 31000000 Hz = hipstack's 31 MHz)
        r3 = load_json(rocm_p)
        r3["card0"]["sclk clock speed:"] = "(500Mhz)"
        pr3 = os.path.join(td, "rocm-sclk.json")
        with open(pr3, "w") as f:
            json.dump(r3, f)
        cap = os.path.join(HERE, "..", "..", "captures", "real", "lact", "rx7900xtx", "sys")
        st9 = {r.field: r.status for r in run(pr3, [hip_p], notes=rocm_p + ".notes", out=io.StringIO())[1]}
        rc10, rows10, _, _ = run(pr3, [hip_p], notes=rocm_p + ".notes", out=io.StringIO(), capture=cap)
        st10 = {r.field: r.status for r in rows10}
        check(st9.get("sclk clock speed:") == "DISAGREE" and st10.get("sclk clock speed:") == "precedence"
              and rc10 == 0, "a clock from hwmon is 'precedence' only with the capture's evidence")
        other = copy.deepcopy(doc)
        other["devices"][0]["metrics"]["clock_sclk"]["value"] = 45.0
        pother = os.path.join(td, "other-sclk.json")
        with open(pother, "w") as f:
            json.dump(other, f)
        st11 = {r.field: r.status for r in run(pr3, [pother], notes=rocm_p + ".notes", out=io.StringIO(),
                                                capture=cap)[1]}
        check(st11.get("sclk clock speed:") == "DISAGREE", "a clock the capture does not hold stays DISAGREE")

        # the floor: a run that compares nothing (or too little) fails, it does not agree vacuously
        thin = {k: ({f: v for f, v in list(card.items())[:3]} if k.startswith("card") else card)
                for k, card in load_json(rocm_p).items()}
        empty = {k: ({} if k.startswith("card") else card) for k, card in load_json(rocm_p).items()}
        for name, doc_ in (("thin", thin), ("empty", empty)):
            pth = os.path.join(td, "rocm-%s.json" % name)
            with open(pth, "w") as f:
                json.dump(doc_, f)
            buf9 = io.StringIO()
            rc9, rows9, _, _ = run(pth, [hip_p], notes=rocm_p + ".notes", out=buf9)
            n9 = sum(1 for r in rows9 if r.status in COMPARED_STATES)
            check(rc9 == 1 and n9 < MIN_COMPARED and "fewer than the floor" in buf9.getvalue(),
                  "%s rocm-smi output (%d fields compared) fails the floor of %d" % (name, n9, MIN_COMPARED))
        check(run(rocm_p, [hip_p], out=io.StringIO(), min_compared=len(agree) + 1)[0] == 1,
              "the sample fails a floor one above its %d compared fields" % len(agree))

    print("\nself-test: %s" % ("PASS" if not failures else "FAIL (%d)" % len(failures)))
    return 0 if not failures else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("rocm_json", nargs="?")
    ap.add_argument("hipstack_json", nargs="*")
    ap.add_argument("--notes", help="live_tree notes (default: ROCM_JSON.notes if present)")
    ap.add_argument("--include-fixed", action="store_true",
                    help="compare fields that live_tree.py repaired for rocm-smi too")
    ap.add_argument("--allow-missing", action="store_true",
                    help="a field rocm-smi reports but hipstack does not print at all is no failure")
    ap.add_argument("--capture", help="the capture's sys/ folder: evidence for hipstack's documented source "
                                      "precedence (precedence.py); without it such rows stay DISAGREE")
    ap.add_argument("--min-compared", type=int, default=MIN_COMPARED,
                    help="fail when fewer fields are compared (default %(default)s)")
    ap.add_argument("--self-test", action="store_true",
                    help="run on rocm-smi-5.2.3/rx7900xtx.json + sample-hipstack-rx7900xtx.json")
    a = ap.parse_args(argv)
    if a.self_test:
        return self_test()
    if not a.rocm_json or not a.hipstack_json:
        ap.print_usage(sys.stderr)
        return 2
    try:
        rc, _, _, _ = run(a.rocm_json, a.hipstack_json, a.notes, a.include_fixed, a.allow_missing,
                          capture=a.capture, min_compared=a.min_compared)
    except (OSError, ValueError) as e:
        print("compare.py: %s" % e, file=sys.stderr)
        return 2
    return rc


if __name__ == "__main__":
    sys.exit(main())
