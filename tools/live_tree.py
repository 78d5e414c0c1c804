#!/usr/bin/env python3
"""Lay a flat sysfs capture out as a LIVE-layout sysfs tree.

Usage: live_tree.py CAPTURE_SYS_DIR OUT_DIR [--for-rocm-smi]

CAPTURE_SYS_DIR is a recorded capture's ``sys`` folder (the capture root that
holds ``sys/`` is accepted too), e.g. shared/fixtures/lact/rx7900xtx/sys, in
the flat shape the fixtures use::

    sys/class/drm/cardN/device/...        (plain folders, no symlinks)
    sys/class/drm/cardN/{uevent,dev,...}
    sys/class/kfd/kfd/topology/...        (only some captures)

OUT_DIR then stands in for /sys and has the shape of a live kernel's sysfs::

    devices/pci0000:00/<BDF>/                    the capture's device/ folder
    devices/pci0000:00/<BDF>/drm/cardN/          cardN's own files
    devices/pci0000:00/<BDF>/drm/cardN/device -> ../../../<BDF>
    devices/pci0000:00/<BDF>/hwmon/hwmonM/device -> ../../../<BDF>
    devices/pci0000:00/<BDF>/driver -> ../../../bus/pci/drivers/<DRIVER>
    devices/pci0000:00/<BDF>/subsystem -> ../../../bus/pci
    devices/virtual/kfd/kfd/topology/...         the capture's KFD topology
    class/drm/cardN       -> ../../devices/pci0000:00/<BDF>/drm/cardN
    class/hwmon/hwmonM    -> ../../devices/pci0000:00/<BDF>/hwmon/hwmonM
    devices/pci0000:00/<BDF>/drm/renderDM/       the render node of an amdgpu card
                                                 (M: its KFD node's drm_render_minor)
    class/drm/renderDM    -> ../../devices/pci0000:00/<BDF>/drm/renderDM
    class/kfd/kfd         -> ../../devices/virtual/kfd/kfd
    bus/pci/devices/<BDF> -> ../../../devices/pci0000:00/<BDF>
    bus/pci/drivers/<DRIVER>/<BDF> -> ../../../../devices/pci0000:00/<BDF>
    module/<DRIVER>/initstate = "live\\n"

Every symlink is relative, so the tree keeps working when it is bind-mounted
over /sys.  <BDF> is PCI_SLOT_NAME from the capture's device/uevent.  File
contents are copied byte for byte.

--for-rocm-smi additionally:
  * synthesizes a minimal KFD topology when the capture has none (AMD's
    rocm-smi 5.2.3 only lists a card that has a KFD node); every value in it
    is derived from the capture's PCI facts and is marked as synthesized in
    the tree (a SYNTHESIZED file next to nodes/);
  * repairs the few things rocm-smi 5.2.3 cannot parse although a correct
    reader must accept them (see shared/reference/MACHINE-NOTES.md):
      - trailing NUL padding in hwmon ``*_label`` files (rsmi_init fails) and
        in pp_dpm_* files (get_multiplier_from_str asserts); a NUL-padded
        hwmon ``name`` is left alone (rocm-smi reads it fine),
      - a missing hwmon ``in0_label`` (rsmi_init fails; SI/CIK cards),
      - a missing hwmon folder or a missing hwmon ``name`` (rocm-smi asserts),
      - the ``S: <f>Mhz`` deep-sleep line in pp_dpm_* files,
      - card numbers that do not start at card0 (rocm-smi probes card0 ..
        count-1): a placeholder simple-framebuffer card fills each gap, as
        simpledrm/efifb does on the recorded machines;
    each change is printed to stderr as one line
        FIX <cardN> <path relative to the device folder> <what> affects=<hipstack metrics>
    (SYNTH and FILL lines say what was synthesized / filled in)
    so the differential test can exclude the affected fields from comparison.

Cards whose uevent does not say DRIVER=amdgpu (radeon) are laid out as well;
rocm-smi ignores them.  Python 3 standard library only.
"""

import argparse
import os
import re
import shutil
import sys

# hipstack metrics whose value rocm-smi can only produce because of a repair:
# the differential test skips them unless told otherwise (compare.py
# --include-fixed).  A label names the sensor; the metric is that sensor's.
_LABEL_TEXT_METRICS = {
    "edge": "temperature_edge,temperature_edge_critical,temperature_edge_emergency",
    "junction": "temperature_junction,temperature_junction_critical,temperature_junction_emergency",
    "mem": "temperature_memory,temperature_memory_critical,temperature_memory_emergency",
    "vddgfx": "voltage_gfx",
    "vddnb": "none",
    "PPT": "power_average,power_current,power_cap,power_cap_min,power_cap_max,power_cap_default",
    "sclk": "clock_sclk",
    "mclk": "clock_mclk",
}


def _label_metrics(text):
    text = text.strip()
    if text.startswith("hbm"):
        return "temperature_hbm"
    return _LABEL_TEXT_METRICS.get(text, "unknown-label-%s" % re.sub(r"\W", "_", text))


_DPM_METRICS = {
    "pp_dpm_sclk": "sclk_level,clock_sclk,clock_sclk_max",
    "pp_dpm_mclk": "mclk_level,clock_mclk,clock_mclk_max",
    "pp_dpm_fclk": "fclk_level,clock_fclk",
    "pp_dpm_socclk": "socclk_level,clock_socclk",
    "pp_dpm_dcefclk": "dcefclk_level,clock_dcefclk",
    "pp_dpm_vclk": "vclk_level,clock_vclk",
    "pp_dpm_dclk": "dclk_level,clock_dclk",
    "pp_dpm_pcie": "pcie_level,pcie_speed,pcie_width",
}
_ALL_HWMON_METRICS = ("temperature_*,power_*,fan_speed,fan_pwm,voltage_gfx")


# --skip-fix names (diagnosis only)
FIX_NAMES = {"nul", "nul-label", "nul-dpm", "hwmon", "in0", "sleep", "fill", "kfd", "render"}
SKIP = set()


def log(msg):
    sys.stderr.write(msg + "\n")


def read_bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def read_text(path):
    b = read_bytes(path)
    if b is None:
        return None
    return b.split(b"\0", 1)[0].decode("utf-8", "replace")


def parse_uevent(path):
    out = {}
    txt = read_text(path) or ""
    for line in txt.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def rel_symlink(target_abs, link_abs, via_parent=False):
    """Create link_abs as a RELATIVE symlink pointing at target_abs.
    via_parent: spell it the way the kernel does for links into an ancestor
    (cardN/device -> ../../../0000:03:00.0, not ../..), so the link text
    names the BDF."""
    os.makedirs(os.path.dirname(link_abs), exist_ok=True)
    if via_parent:
        rel = os.path.join(os.path.relpath(os.path.dirname(target_abs), os.path.dirname(link_abs)),
                           os.path.basename(target_abs))
    else:
        rel = os.path.relpath(target_abs, os.path.dirname(link_abs))
    if os.path.lexists(link_abs):
        os.remove(link_abs)
    os.symlink(rel, link_abs)


def copy_tree(src, dst, skip_top=()):
    """Copy files byte for byte (no metadata games, symlinks kept as links)."""
    os.makedirs(dst, exist_ok=True)
    for name in sorted(os.listdir(src)):
        if name in skip_top:
            continue
        s = os.path.join(src, name)
        d = os.path.join(dst, name)
        if os.path.islink(s):
            os.symlink(os.readlink(s), d)
        elif os.path.isdir(s):
            copy_tree(s, d)
        else:
            shutil.copyfile(s, d)


def find_sys_dir(path):
    if os.path.isdir(os.path.join(path, "class")):
        return path
    if os.path.isdir(os.path.join(path, "sys", "class")):
        return os.path.join(path, "sys")
    raise SystemExit("live_tree.py: %s has neither class/ nor sys/class/" % path)


def card_sort_key(name):
    m = re.match(r"card(\d+)$", name)
    return int(m.group(1)) if m else 1 << 30


class Card:
    def __init__(self, name, src_card, bdf, uevent):
        self.name = name                    # "card0"
        self.num = card_sort_key(name)
        self.src_card = src_card            # capture's class/drm/cardN
        self.src_dev = os.path.join(src_card, "device")
        self.bdf = bdf                      # "0000:03:00.0"
        self.uevent = uevent
        self.driver = uevent.get("DRIVER", "")
        self.dev_dir = None                 # OUT/devices/pci.../<BDF>


def bdf_parts(bdf):
    m = re.match(r"^([0-9a-fA-F]{4}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$", bdf)
    if not m:
        raise SystemExit("live_tree.py: bad PCI_SLOT_NAME %r" % bdf)
    return tuple(int(g, 16) for g in m.groups())


# --------------------------------------------------------------------------
# rocm-smi repairs
# --------------------------------------------------------------------------

def fix_nul_padding(card, path, what_metrics, kind):
    if "nul" in SKIP or "nul-" + kind in SKIP:
        return
    b = read_bytes(path)
    if b is None or b"\0" not in b:
        return
    head = b.split(b"\0", 1)[0]
    if not head.endswith(b"\n"):
        head += b"\n"
    with open(path, "wb") as f:
        f.write(head)
    rel = os.path.relpath(path, card.dev_dir)
    log("FIX %s %s stripped %d NUL padding bytes affects=%s"
        % (card.name, rel, len(b) - len(head), what_metrics))


def kfd_render_minors(kfd_dst):
    """{(domain, location_id): drm_render_minor} of the KFD GPU nodes (a node without one is left out)."""
    minors = {}
    nodes = os.path.join(kfd_dst, "topology", "nodes") if kfd_dst else None
    if not nodes or not os.path.isdir(nodes):
        return minors
    for n in os.listdir(nodes):
        props = {}
        for line in (read_text(os.path.join(nodes, n, "properties")) or "").splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit():
                props[parts[0]] = int(parts[1])
        if props.get("drm_render_minor", 0) >= 128:  # render minors start at 128; a CPU node has 0
            minors[(props.get("domain", 0), props.get("location_id", 0))] = props["drm_render_minor"]
    return minors


def add_render_nodes(out, drm_src, cards, kfd_dst, for_rocm_smi):
    """Each amdgpu card's render node (PCI cards and partitions' platform cards), as a live kernel
    has it: drm/renderDM beside drm/cardN, its device link, and class/drm/renderDM. M is the
    drm_render_minor of the card's KFD node; the
    capture's own class/drm/renderDM files are copied when it has them, else (--for-rocm-smi only:
    rocm-smi 6 and later find a GPU through its render node) dev and uevent are written, with a SYNTH line."""
    minors = kfd_render_minors(kfd_dst)
    for c in cards:
        if c.bdf is not None:
            if c.driver != "amdgpu":
                continue
            domain, bus, device, function = bdf_parts(c.bdf)
            minor = minors.get((domain, bus << 8 | device << 3 | function))
        else:
            # A partition's platform card (amdgpu_xcp): its render node has the same DRM index as
            # its card (renderD<128 + N> beside cardN), as the kernel numbers them.
            minor = 128 + c.num if 128 + c.num in minors.values() else None
        if minor is None:
            continue
        name = "renderD%d" % minor
        node_dir = os.path.join(c.dev_dir, "drm", name)
        src = os.path.join(drm_src, name)
        if os.path.isdir(src):
            copy_tree(src, node_dir, skip_top=("device",))
        elif for_rocm_smi and "render" not in SKIP:
            write(os.path.join(node_dir, "dev"), "226:%d\n" % minor)
            write(os.path.join(node_dir, "uevent"), "MAJOR=226\nMINOR=%d\nDEVNAME=dri/%s\nDEVTYPE=drm_minor\n" % (minor, name))
            log("SYNTH %s drm/%s (the KFD node's drm_render_minor; the capture has no render node) affects=none"
                % (c.name, name))
        else:
            continue
        rel_symlink(c.dev_dir, os.path.join(node_dir, "device"), via_parent=True)
        rel_symlink(node_dir, os.path.join(out, "class", "drm", name))


def fix_for_rocm_smi(card):
    """Only for cards rocm-smi will try to read (DRIVER=amdgpu)."""
    hw_root = os.path.join(card.dev_dir, "hwmon")
    hwmons = sorted(os.listdir(hw_root)) if os.path.isdir(hw_root) else []
    if not hwmons and "hwmon" not in SKIP:
        # rocm-smi 5.2.3 asserts when the device has no hwmon folder at all.
        name = "hwmon%d" % (90 + card.num)
        d = os.path.join(hw_root, name)
        os.makedirs(d)
        with open(os.path.join(d, "name"), "wb") as f:
            f.write(b"amdgpu\n")
        log("FIX %s hwmon/%s/name created (capture has no hwmon; rocm-smi asserts without one; "
            "it holds only name) affects=%s" % (card.name, name, _ALL_HWMON_METRICS))
        hwmons = [name]
    for h in hwmons:
        d = os.path.join(hw_root, h)
        if not os.path.isdir(d):
            continue
        namef = os.path.join(d, "name")
        if not os.path.exists(namef) and "hwmon" not in SKIP:
            with open(namef, "wb") as f:
                f.write(b"amdgpu\n")
            log("FIX %s hwmon/%s/name created (missing; rocm-smi asserts) affects=%s"
                % (card.name, h, _ALL_HWMON_METRICS))
        # A NUL-padded name (lact/rx7900xtx) is left alone: rocm-smi reads it
        # up to the newline and accepts it (checked: same output either way).
        if not os.path.exists(os.path.join(d, "in0_label")) and "in0" not in SKIP:
            # rocm-smi 5.2.3 (Monitor::setVoltSensorLabelMap) reads in0_label at
            # init and fails rsmi_init (status 8) when it is absent, as it is on
            # SI/CIK cards that have no vddgfx sensor.  The label alone gives it
            # nothing to read: in0_input stays as the capture has it.
            with open(os.path.join(d, "in0_label"), "wb") as f:
                f.write(b"vddgfx\n")
            log("FIX %s hwmon/%s/in0_label created as 'vddgfx' (missing; rsmi_init fails "
                "without it; in0_input %s) affects=voltage_gfx"
                % (card.name, h, "present" if os.path.exists(os.path.join(d, "in0_input"))
                   else "absent, so voltage stays unsupported"))
        for fn in sorted(os.listdir(d)):
            if fn.endswith("_label"):
                lp = os.path.join(d, fn)
                fix_nul_padding(card, lp, _label_metrics(read_text(lp) or ""), "label")
    for fn, metrics in sorted(_DPM_METRICS.items()):
        p = os.path.join(card.dev_dir, fn)
        # NUL padding after the last level line (lact/rx6900xt) makes
        # get_multiplier_from_str() assert in rocm-smi -c/-g/-s.
        fix_nul_padding(card, p, metrics, "dpm")
        b = read_bytes(p)
        if b is None:
            continue
        lines = b.split(b"\n")
        keep = [l for l in lines if not l.lstrip().startswith(b"S:")]
        if len(keep) != len(lines) and "sleep" not in SKIP:
            dropped = [l.decode("utf-8", "replace").strip() for l in lines if l.lstrip().startswith(b"S:")]
            with open(p, "wb") as f:
                f.write(b"\n".join(keep))
            log("FIX %s %s removed deep-sleep line(s) %s affects=%s"
                % (card.name, fn, "; ".join(repr(x) for x in dropped), metrics))


def fill_card_gaps(out, cards):
    """rocm-smi 5.2.3 counts the cardN entries and then probes card0..count-1,
    so a capture holding only card1 (card0 was simpledrm/efifb on the recorded
    machine) is invisible to it.  Put back what that machine had: a non-PCI
    simple-framebuffer card for every missing lower number (no vendor file,
    so every reader, rocm-smi included, skips it).  The AMD card keeps its
    own number."""
    have = {c.num for c in cards}
    for n in range(max(have)):
        if n in have:
            continue
        plat = os.path.join(out, "devices", "platform", "simple-framebuffer.%d" % n)
        write(os.path.join(plat, "uevent"),
              "DRIVER=simple-framebuffer\nMODALIAS=platform:simple-framebuffer\n")
        cd = os.path.join(plat, "drm", "card%d" % n)
        write(os.path.join(cd, "uevent"),
              "MAJOR=226\nMINOR=%d\nDEVNAME=dri/card%d\nDEVTYPE=drm_minor\n" % (n, n))
        write(os.path.join(cd, "dev"), "226:%d\n" % n)
        rel_symlink(plat, os.path.join(cd, "device"), via_parent=True)
        rel_symlink(cd, os.path.join(out, "class", "drm", "card%d" % n))
        log("FILL card%d placeholder simple-framebuffer (capture starts at card%d; "
            "rocm-smi probes card0 first) affects=none" % (n, min(have)))


# --------------------------------------------------------------------------
# KFD
# --------------------------------------------------------------------------

def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def synthesize_kfd(out, cards):
    """SYNTHESIZED KFD topology: the capture has none.  Every value below is
    made up from the capture's PCI facts (uevent, unique_id, mem_info_*), only
    so that rocm-smi 5.2.3 lists the card.  Nothing here is a measurement: do
    not compare compute_units, gfx_target or kfd_gpu_id against it."""
    kfd = os.path.join(out, "devices", "virtual", "kfd", "kfd")
    topo = os.path.join(kfd, "topology")
    write(os.path.join(topo, "SYNTHESIZED"),
          "This KFD topology was synthesized by tools/live_tree.py --for-rocm-smi from the\n"
          "capture's PCI facts; it is not a recording. gpu_id, simd/cu counts and\n"
          "gfx_target_version are placeholders.\n")
    write(os.path.join(topo, "generation_id"), "1\n")
    write(os.path.join(topo, "system_properties"),
          "platform_oem 0\nplatform_id 0\nplatform_rev 0\n")
    write(os.path.join(kfd, "dev"), "237:0\n")
    write(os.path.join(kfd, "uevent"), "MAJOR=237\nMINOR=0\nDEVNAME=kfd\n")
    gpus = [c for c in cards if c.driver == "amdgpu"]
    # node 0: the CPU
    n0 = os.path.join(topo, "nodes", "0")
    write(os.path.join(n0, "gpu_id"), "0\n")
    write(os.path.join(n0, "name"), "\n")
    write(os.path.join(n0, "properties"), "".join("%s %d\n" % kv for kv in [
        ("cpu_cores_count", 1), ("simd_count", 0), ("mem_banks_count", 0),
        ("caches_count", 0), ("io_links_count", len(gpus)), ("p2p_links_count", 0),
        ("cpu_core_id_base", 0), ("simd_id_base", 0), ("max_waves_per_simd", 0),
        ("lds_size_in_kb", 0), ("gds_size_in_kb", 0), ("num_gws", 0),
        ("wave_front_size", 0), ("array_count", 0), ("simd_arrays_per_engine", 0),
        ("cu_per_simd_array", 0), ("simd_per_cu", 0), ("max_slots_scratch_cu", 0),
        ("gfx_target_version", 0), ("vendor_id", 0), ("device_id", 0),
        ("location_id", 0), ("domain", 0), ("drm_render_minor", 0), ("hive_id", 0),
        ("num_sdma_engines", 0), ("num_sdma_xgmi_engines", 0),
        ("num_sdma_queues_per_engine", 0), ("num_cp_queues", 0),
        ("max_engine_clk_fcompute", 0), ("local_mem_size", 0), ("fw_version", 0),
        ("capability", 0), ("debug_prop", 0), ("sdma_fw_version", 0), ("unique_id", 0),
        ("max_engine_clk_ccompute", 0)]))
    os.makedirs(os.path.join(n0, "mem_banks"), exist_ok=True)
    os.makedirs(os.path.join(n0, "caches"), exist_ok=True)
    for i, c in enumerate(gpus):
        node = i + 1
        write(os.path.join(n0, "io_links", str(i), "properties"), _io_link(0, node))
        dom, bus, dev, fn = bdf_parts(c.bdf)
        location_id = (bus << 8) | (dev << 3) | fn
        pci_id = c.uevent.get("PCI_ID", "0:0").split(":")
        vendor_id = int(pci_id[0], 16)
        device_id = int(pci_id[1], 16) if len(pci_id) > 1 else 0
        uid = read_text(os.path.join(c.dev_dir, "unique_id"))
        try:
            unique_id = int(uid.strip(), 16) if uid and uid.strip() else 0
        except ValueError:
            unique_id = 0
        vram = read_text(os.path.join(c.dev_dir, "mem_info_vram_total"))
        try:
            local_mem = int(vram.strip()) if vram else 0
        except ValueError:
            local_mem = 0
        # gpu_id: non-zero placeholder (the real one is a hash of device facts)
        gpu_id = 0x1000 + ((location_id * 31 + dom * 7 + device_id) & 0xefff)
        nd = os.path.join(topo, "nodes", str(node))
        write(os.path.join(nd, "gpu_id"), "%d\n" % gpu_id)
        write(os.path.join(nd, "name"), "synthesized\n")
        write(os.path.join(nd, "properties"), "".join("%s %d\n" % kv for kv in [
            ("cpu_cores_count", 0), ("simd_count", 0), ("mem_banks_count", 0),
            ("caches_count", 0), ("io_links_count", 1), ("p2p_links_count", 0),
            ("cpu_core_id_base", 0), ("simd_id_base", 2147487744), ("max_waves_per_simd", 0),
            ("lds_size_in_kb", 0), ("gds_size_in_kb", 0), ("num_gws", 0),
            ("wave_front_size", 0), ("array_count", 0), ("simd_arrays_per_engine", 0),
            ("cu_per_simd_array", 0), ("simd_per_cu", 0), ("max_slots_scratch_cu", 0),
            ("gfx_target_version", 0), ("vendor_id", vendor_id), ("device_id", device_id),
            ("location_id", location_id), ("domain", dom),
            ("drm_render_minor", 128 + c.num), ("hive_id", 0),
            ("num_sdma_engines", 0), ("num_sdma_xgmi_engines", 0),
            ("num_sdma_queues_per_engine", 0), ("num_cp_queues", 0),
            ("max_engine_clk_fcompute", 0), ("local_mem_size", local_mem), ("fw_version", 0),
            ("capability", 0), ("debug_prop", 0), ("sdma_fw_version", 0),
            ("unique_id", unique_id), ("num_xcc", 1), ("max_engine_clk_ccompute", 0)]))
        write(os.path.join(nd, "io_links", "0", "properties"), _io_link(node, 0))
        os.makedirs(os.path.join(nd, "mem_banks"), exist_ok=True)
        os.makedirs(os.path.join(nd, "caches"), exist_ok=True)
        log("SYNTH %s KFD node %d gpu_id=%d location_id=%d domain=%d (capture has no KFD) "
            "affects=kfd_gpu_id,compute_units,gfx_target"
            % (c.name, node, gpu_id, location_id, dom))
    return kfd


def _io_link(frm, to):
    return "".join("%s %d\n" % kv for kv in [
        ("type", 2), ("version_major", 0), ("version_minor", 0), ("node_from", frm),
        ("node_to", to), ("weight", 20), ("min_latency", 0), ("max_latency", 0),
        ("min_bandwidth", 0), ("max_bandwidth", 0), ("recommended_transfer_size", 0),
        ("flags", 1)])


# --------------------------------------------------------------------------

def build(src_sys, out, for_rocm_smi):
    drm_src = os.path.join(src_sys, "class", "drm")
    if not os.path.isdir(drm_src):
        raise SystemExit("live_tree.py: %s has no class/drm" % src_sys)
    cards = []
    platform_cards = []
    for name in sorted(os.listdir(drm_src), key=card_sort_key):
        if not re.match(r"card\d+$", name):
            continue
        src_card = os.path.join(drm_src, name)
        ue = parse_uevent(os.path.join(src_card, "device", "uevent"))
        bdf = ue.get("PCI_SLOT_NAME")
        if not bdf:
            # A platform device (amdgpu's partition/XCP cards): no PCI slot.
            platform_cards.append(Card(name, src_card, None, ue))
            continue
        cards.append(Card(name, src_card, bdf.lower(), ue))
    if not cards:
        raise SystemExit("live_tree.py: no class/drm/cardN in %s" % src_sys)

    os.makedirs(out, exist_ok=True)
    if os.listdir(out):
        raise SystemExit("live_tree.py: %s is not empty" % out)

    hwmon_seen = {}
    drivers = set()
    for c in cards:
        dom = c.bdf.split(":")[0]
        root = os.path.join(out, "devices", "pci%s:00" % dom)
        c.dev_dir = os.path.join(root, c.bdf)
        if os.path.exists(c.dev_dir):
            raise SystemExit("live_tree.py: two cards share BDF %s" % c.bdf)
        copy_tree(c.src_dev, c.dev_dir)
        # the drm card folder itself (uevent, dev, ... but not device/)
        card_dir = os.path.join(c.dev_dir, "drm", c.name)
        copy_tree(c.src_card, card_dir, skip_top=("device",))
        rel_symlink(c.dev_dir, os.path.join(card_dir, "device"), via_parent=True)
        rel_symlink(card_dir, os.path.join(out, "class", "drm", c.name))
        rel_symlink(c.dev_dir, os.path.join(out, "bus", "pci", "devices", c.bdf))
        if not os.path.lexists(os.path.join(c.dev_dir, "subsystem")):
            rel_symlink(os.path.join(out, "bus", "pci"), os.path.join(c.dev_dir, "subsystem"))
        if c.driver:
            drivers.add(c.driver)
            drv = os.path.join(out, "bus", "pci", "drivers", c.driver)
            os.makedirs(drv, exist_ok=True)
            rel_symlink(c.dev_dir, os.path.join(drv, c.bdf))
            # A capture may record the driver link as a text file (procfs-vega10):
            # keep that file byte-identical and add no link then.
            if not os.path.lexists(os.path.join(c.dev_dir, "driver")):
                rel_symlink(drv, os.path.join(c.dev_dir, "driver"))
        if for_rocm_smi and c.driver == "amdgpu":
            fix_for_rocm_smi(c)
        hw_root = os.path.join(c.dev_dir, "hwmon")
        if os.path.isdir(hw_root):
            for h in sorted(os.listdir(hw_root)):
                hd = os.path.join(hw_root, h)
                if not os.path.isdir(hd):
                    continue
                if h in hwmon_seen:
                    raise SystemExit("live_tree.py: %s appears under two cards" % h)
                hwmon_seen[h] = c
                rel_symlink(hd, os.path.join(out, "class", "hwmon", h))
                if not os.path.lexists(os.path.join(hd, "device")):
                    rel_symlink(c.dev_dir, os.path.join(hd, "device"), via_parent=True)

    # Platform cards live under /sys/devices/platform/<device>/drm/cardN, e.g. amdgpu_xcp.3.
    for c in platform_cards:
        alias = c.uevent.get("MODALIAS", "platform:" + c.name).split(":", 1)[-1]
        c.dev_dir = os.path.join(out, "devices", "platform", "%s.%d" % (alias, c.num))
        copy_tree(c.src_dev, c.dev_dir)
        card_dir = os.path.join(c.dev_dir, "drm", c.name)
        copy_tree(c.src_card, card_dir, skip_top=("device",))
        rel_symlink(c.dev_dir, os.path.join(card_dir, "device"), via_parent=True)
        rel_symlink(card_dir, os.path.join(out, "class", "drm", c.name))

    if for_rocm_smi and "fill" not in SKIP:
        fill_card_gaps(out, cards + platform_cards)

    # KFD
    kfd_src = os.path.join(src_sys, "class", "kfd", "kfd")
    kfd_dst = None
    if os.path.isdir(os.path.join(kfd_src, "topology")):
        kfd_dst = os.path.join(out, "devices", "virtual", "kfd", "kfd")
        copy_tree(kfd_src, kfd_dst)
    elif for_rocm_smi and "kfd" not in SKIP and any(c.driver == "amdgpu" for c in cards):
        kfd_dst = synthesize_kfd(out, cards)
    if kfd_dst:
        # a live kernel always has kfd/proc/ (one folder per KFD process);
        # rocm-smi --showpids reads it.  An empty one means "no processes".
        os.makedirs(os.path.join(kfd_dst, "proc"), exist_ok=True)
        rel_symlink(kfd_dst, os.path.join(out, "class", "kfd", "kfd"))

    add_render_nodes(out, drm_src, cards + platform_cards, kfd_dst, for_rocm_smi)

    for d in sorted(drivers):
        write(os.path.join(out, "module", d, "initstate"), "live\n")

    for c in cards:
        log("CARD %s %s driver=%s" % (c.name, c.bdf, c.driver or "?"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("capture_sys_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--skip-fix", action="append", default=[], metavar="NAME",
                    choices=sorted(FIX_NAMES),
                    help="with --for-rocm-smi, leave one repair out (to see what it is for): "
                         + ", ".join(sorted(FIX_NAMES)))
    ap.add_argument("--for-rocm-smi", action="store_true",
                    help="synthesize KFD if missing and repair what rocm-smi 5.2.3 cannot parse")
    a = ap.parse_args(argv)
    SKIP.update(a.skip_fix)
    build(find_sys_dir(a.capture_sys_dir), a.out_dir, a.for_rocm_smi)
    return 0


if __name__ == "__main__":
    sys.exit(main())
