"""Build one constructed MI300X capture (SPX or CPX) in memory from the model in mi300x_model.py.

Part of make_mi300x.py (the command line); this file holds build(mode), which returns a Tree with
every sys/ and proc/ file, the capture's README.md and expected.json; compact_json() (the
deterministic expected.json layout); capture_readme() (the per-capture README.md text).
"""

import json

from mi300x_model import (
    BUSES, CPU_CPULISTS, CPU_NODE_MEM, CPU_PROPS_COMMON, CPU_PROP_KEYS, CPX, DCLK_LEVELS,
    FCLK_LEVELS, FDINFO_EXTRA_VRAM_KIB, FIRMWARE, FRU_ID, GPUS, GTT_TOTAL, HIVE_ID,
    KFD_QUEUE_TYPES, LINK_ROW, MANUFACTURER, MCLK_LEVELS, NUM_GPUS, PCI_CLASS, PCI_DEVICE,
    PCI_REVISION, PCI_SUBSYS, PCI_VENDOR, POWER_CAP_W, PROCS, PRODUCT_NAME, PRODUCT_NUMBER,
    REC_SDMA_ENG_MAP, SERIALS, SOCCLK_LEVELS, SPX, TEMP_JUNC_CRIT, TEMP_JUNC_EMERG, TEMP_MEM_CRIT,
    TEMP_MEM_EMERG, Tree, UNIQUE_IDS, VBIOS, VCLK_LEVELS, VRAM_PER_CPX_PARTITION, VRAM_TOTAL,
    VRAM_VENDOR, attachments, bdf, cache_files, card_index, gpu_metrics, gpu_props, gtt_used,
    iolink, kfd_nodes, levels_json, link_row, print_clks, props_text, render_minor, sclk_lines,
    vram_used, xcc_busy, xgmi_node_id)


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
