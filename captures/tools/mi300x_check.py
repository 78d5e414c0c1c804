"""make_mi300x.py --check: re-read a constructed MI300X capture and compare it with expected.json.

Part of make_mi300x.py (the command line); this file holds Checker (error/check counting), the
file-format regexes and parsers (parse_props, parse_dpm), check_capture() and
real_property_keys() (the KFD property key order of the real CPX capture, [CPX]).
"""

import json
import os
import re
import struct

from mi300x_model import (
    CPU_PROP_KEYS, GPU_PROP_KEYS, IOLINK_KEYS, LINK_ROW, REAL_CPX, SPX, decode_gpu_metrics,
    link_row)


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
