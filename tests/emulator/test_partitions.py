#!/usr/bin/env python3
"""Partitions and controls end to end on the amdgpu emulator (tests/emulator/README.md).

Usage: test_partitions.py EMULATOR HIPSTACK_SMI PARTITION_PROBE CAPTURES_DIR

On the constructed 8x MI300X node: every refusal path (message, exit code, nothing written), then
SPX -> CPX -> DPX -> SPX and NPS1 -> NPS4, checking after each step that the library (the process that
made the change), the CLI that made it and a second process list exactly the partitions the driver
created (read straight from the emulator's backing copy). Then non-root reads and writes, and the
other controls on a real RX 5700 XT capture. Exit 77 when FUSE is unavailable.
"""
import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

EMULATOR, CLI, PROBE, CAPTURES = sys.argv[1:5]
MI300X = os.path.join(CAPTURES, "constructed", "mi300x-8gpu-spx-nps1")
RX5700XT = os.path.join(CAPTURES, "real", "lact", "rx5700xt")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


class Emulator:
    def __init__(self, capture):
        scratch = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
        self.base = tempfile.mkdtemp(prefix="hipstack-emulator-", dir=scratch)
        os.chmod(self.base, 0o755)  # non-root tests walk through it
        self.mount = os.path.join(self.base, "mnt")
        os.mkdir(self.mount)
        self.backing = os.path.join(self.base, "work", "backing")
        self.sys = os.path.join(self.mount, "sys")
        self.log = open(os.path.join(self.base, "emulator.log"), "w+")
        self.proc = subprocess.Popen([EMULATOR, "--settle-ms", "100", capture, os.path.join(self.base, "work"), self.mount],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while not os.path.exists(os.path.join(self.mount, ".emulator", "control")):
            if self.proc.poll() is not None:
                self.log.seek(0)
                text = self.log.read()
                shutil.rmtree(self.base, ignore_errors=True)
                if self.proc.returncode == 77:
                    print("SKIP: " + text.strip())
                    sys.exit(77)
                sys.exit("emulator exited with %d: %s" % (self.proc.returncode, text))
            if time.time() > deadline:
                self.stop()
                sys.exit("emulator did not mount within 20 s")
            time.sleep(0.05)

    def control(self, command):
        with open(os.path.join(self.mount, ".emulator", "control"), "w") as f:
            f.write(command)

    def stop(self):
        self.proc.terminate()  # libfuse unmounts on SIGTERM
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if os.path.ismount(self.mount):
            subprocess.run(["fusermount3", "-u", self.mount], check=False)
        shutil.rmtree(self.base, ignore_errors=True)


def run(args, as_nobody=False):
    cmd = (NOBODY if as_nobody else []) + args
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def smi(emu, *args, as_nobody=False):
    return run([CLI, "--sysfs-root", emu.sys] + list(args), as_nobody)


def read(path):
    with open(path) as f:
        return f.read()


def props(path):
    out = {}
    for line in read(path).splitlines():
        key, _, value = line.partition(" ")
        out[key] = value.strip()
    return out


def driver_partitions(emu):
    """What the driver created: the KFD GPU nodes in the backing copy, per BDF, by function."""
    nodes = os.path.join(emu.backing, "sys/class/kfd/kfd/topology/nodes")
    found = {}
    for node in os.listdir(nodes):
        p = props(os.path.join(nodes, node, "properties"))
        if int(p["simd_count"]) == 0:
            continue
        loc = int(p["location_id"])
        bdf = "%04x:%02x:%02x.%x" % (int(p["domain"]), loc >> 8, (loc >> 3) & 0x1F, loc & 7)
        mem = sum(int(props(os.path.join(nodes, node, "mem_banks", b, "properties"))["size_in_bytes"])
                  for b in os.listdir(os.path.join(nodes, node, "mem_banks")))
        gpu_id = int(read(os.path.join(nodes, node, "gpu_id")))
        found.setdefault(bdf[:-2], []).append(
            (bdf, gpu_id, int(p["drm_render_minor"]), int(p["num_xcc"]), int(p["simd_count"]) // int(p["simd_per_cu"]), mem))
    return {gpu: sorted(parts) for gpu, parts in found.items()}


def cli_partitions(devices, what):
    """Partitions of a `partition --json` devices array, in the same shape, ids checked."""
    out = {}
    for d in devices:
        rows = []
        for i, p in enumerate(d["partition_list"]):
            check(p["index"] == i and p["id"] == "%s/%d" % (d["uuid"], i), "%s: partition id %s at %d" % (what, p["id"], i))
            m = p["metrics"]
            rows.append((p["bdf"], m["partition_kfd_gpu_id"]["value"], m["partition_render_minor"]["value"],
                         m["partition_xccs"]["value"], m["partition_compute_units"]["value"], m["partition_memory"]["value"]))
        out[d["bdf"][:-2]] = sorted(rows)
    return out


def probe_partitions(stdout):
    out = {}
    for line in stdout.splitlines():
        f = line.split()
        if f[0] == "partition":
            out.setdefault(f[2][:-2], []).append((f[2], int(f[4]), int(f[5]), int(f[6]), int(f[7]), int(f[8])))
    return {gpu: sorted(parts) for gpu, parts in out.items()}


def second_process(emu, what, as_nobody=False):
    rc, out, err = smi(emu, "partition", "--json", as_nobody=as_nobody)
    check(rc == 0, "%s: second process `partition --json` rc %d: %s" % (what, rc, err))
    return json.loads(out)["devices"] if rc == 0 else []


def state(emu):
    """The files a write could change, for "nothing was written" checks."""
    snap = {"generation": read(os.path.join(emu.backing, "sys/class/kfd/kfd/topology/generation_id")),
            "nodes": sorted(os.listdir(os.path.join(emu.backing, "sys/class/kfd/kfd/topology/nodes")))}
    drm = os.path.join(emu.backing, "sys/class/drm")
    for card in os.listdir(drm):
        dev = os.path.join(drm, card, "device")
        for name in ("current_compute_partition", "current_memory_partition", "power_dpm_force_performance_level"):
            if os.path.exists(os.path.join(dev, name)):
                snap[card + "/" + name] = read(os.path.join(dev, name))
        hw = os.path.join(dev, "hwmon")
        for h in os.listdir(hw) if os.path.isdir(hw) else []:
            if os.path.exists(os.path.join(hw, h, "power1_cap")):
                snap[card + "/power1_cap"] = read(os.path.join(hw, h, "power1_cap"))
    return snap


def refused(emu, what, args, code, text, as_nobody=False):
    before = state(emu)
    rc, out, err = smi(emu, *args, as_nobody=as_nobody)
    check(rc == code, "%s: exit %d, expected %d (%s%s)" % (what, rc, code, out, err))
    check(text in out + err, "%s: output lacks %r: %s%s" % (what, text, out, err))
    check(state(emu) == before, "%s: something was written" % what)
    check(not any(l.startswith("hipstack-smi: audit:") and l.endswith(": ok") for l in err.splitlines()),
          "%s: a write was made: %s" % (what, err))


def refusals(emu):
    busy = ["partition", "--compute-mode", "CPX", "-g", "4"]
    refused(emu, "busy GPU", busy, 4, "1 process(es) use the GPU: 48213 (python3)")
    refused(emu, "busy GPU with --force (driver EBUSY)", busy + ["--force"], 4, "Device or resource busy")
    refused(emu, "unavailable mode", ["partition", "--compute-mode", "tpx", "-g", "2"], 2, "TPX is not available on this GPU")
    refused(emu, "unknown mode", ["partition", "--compute-mode", "XPX", "-g", "2"], 2, "\"XPX\" is not a compute partition mode")
    refused(emu, "unavailable NPS", ["partition", "--memory-mode", "NPS8", "-g", "2"], 2, "NPS8 is not available")
    refused(emu, "no -g", ["partition", "--compute-mode", "CPX"], 2, "name the GPUs to change with -g")
    refused(emu, "no such GPU", ["partition", "--compute-mode", "CPX", "-g", "9"], 3, "no device 9")
    refused(emu, "power cap above max", ["set", "--power-cap", "900", "-g", "2"], 2, "900 W is outside the allowed range 0 W..750 W")
    refused(emu, "fan on a GPU without one", ["set", "--fan", "50", "-g", "2"], 4, "fan control is not supported here")
    refused(emu, "reset without a reset method", ["reset", "-g", "2"], 4, "a GPU reset (the PCI core offers no reset method")
    emu.control("reset-begin card16")
    refused(emu, "reset in progress", ["partition", "--compute-mode", "CPX", "-g", "2"], 4, "a GPU reset is in progress")
    refused(emu, "reset in progress (power cap)", ["set", "--power-cap", "500", "-g", "2"], 4, "a GPU reset is in progress")
    emu.control("reset-end card16")
    vf = os.path.join(emu.backing, "sys/class/drm/card16/device/physfn")
    open(vf, "w").close()
    refused(emu, "virtual function", ["partition", "--compute-mode", "CPX", "-g", "2"], 4, "SR-IOV virtual function")
    os.unlink(vf)
    refused(emu, "non-root compute mode", ["partition", "--compute-mode", "CPX", "-g", "2"], 5, "needs root", as_nobody=True)
    refused(emu, "non-root power cap", ["set", "--power-cap", "500", "-g", "2"], 5, "needs root", as_nobody=True)
    refused(emu, "non-root reset", ["reset", "-g", "0"], 4, "not supported", as_nobody=True)
    # Where the PCI core offers a function reset (a `reset` attribute), a busy GPU is still refused.
    for card in ("card16", "card32"):
        open(os.path.join(emu.backing, "sys/class/drm", card, "device/reset"), "w").close()
    refused(emu, "reset of a busy GPU", ["reset", "-g", "4"], 4, "1 process(es) use the GPU: 48213 (python3)")
    refused(emu, "non-root reset with a reset method", ["reset", "-g", "2"], 5, "needs root", as_nobody=True)
    rc, out, err = smi(emu, "reset", "-g", "2")
    check(rc == 0 and "GPU reset (PCI function reset): done" in out, "reset of an idle GPU: rc %d %s %s" % (rc, out, err))
    check("write \"1\" to %s/class/drm/card16/device/reset: ok" % emu.sys in err, "reset not audited: " + err)
    refused(emu, "dry run", ["partition", "--compute-mode", "CPX", "-g", "2", "--dry-run"], 0,
            "would write \"CPX\" to %s/class/drm/card16/device/current_compute_partition" % emu.sys)
    # The driver's own verdicts, straight at the mount (the library refuses these before writing).
    dev = os.path.join(emu.sys, "class/drm/card16/device")
    for path, value, want in ((dev + "/current_compute_partition", "TPX", errno.EINVAL),
                              (dev + "/hwmon/hwmon4/power1_cap", "900000000", errno.EINVAL),
                              (os.path.join(emu.sys, "class/drm/card32/device/current_compute_partition"), "CPX", errno.EBUSY),
                              (dev + "/vendor", "0x1002", errno.EACCES)):
        before = state(emu)
        try:
            with open(path, "w") as f:
                f.write(value)
            check(False, "emulator accepted %s > %s" % (value, path))
        except OSError as e:
            check(e.errno == want, "emulator: %s > %s gave %s, expected %s" % (value, path, e.errno, want))
        check(state(emu) == before, "emulator: refused store %s changed something" % path)


def step(emu, mode, by_library):
    what = "switch to " + mode
    if by_library:
        rc, out, err = run([PROBE, emu.sys, "--compute-mode", mode])
        check(rc == 0, "%s through the library: rc %d %s %s" % (what, rc, out, err))
        mine = probe_partitions(out)
    else:
        rc, out, err = smi(emu, "partition", "--compute-mode", mode.lower(), "-g", "all", "--json")
        check(rc == 0, "%s through the CLI: rc %d %s" % (what, rc, err))
        doc = json.loads(out)
        check(all(r["outcome"] == "applied" for r in doc["results"]) and len(doc["results"]) == 8, what + ": not all applied")
        mine = cli_partitions(doc["devices"], what)
    truth = driver_partitions(emu)
    expected = {"SPX": 1, "DPX": 2, "CPX": 8}[mode]
    check(len(truth) == 8 and all(len(p) == expected for p in truth.values()),
          "%s: the driver holds %s partitions" % (what, {g: len(p) for g, p in truth.items()}))
    check(mine == truth, "%s: the switching process lists %s, the driver created %s" % (what, mine, truth))
    check(cli_partitions(second_process(emu, what), what) == truth, what + ": a second process disagrees with the driver")
    rc, out, _ = run([PROBE, emu.sys])
    check(rc == 0 and probe_partitions(out) == truth, what + ": a second library process disagrees with the driver")
    return truth


def partitions_chain(emu):
    # The jobs end: without KFD processes the driver lets every GPU switch.
    for top in ("sys/class/kfd/kfd/proc", "proc"):
        d = os.path.join(emu.backing, top)
        for entry in os.listdir(d):
            shutil.rmtree(os.path.join(d, entry))
    first = step(emu, "CPX", by_library=True)
    # The emulated CPX layout is the constructed CPX node's (built from the real MI300X CPX topology):
    # same BDFs, render minors, XCCs, CUs and memory per partition; only the KFD gpu_ids are new.
    rc, out, err = run([CLI, "--sysfs-root", os.path.join(CAPTURES, "constructed", "mi300x-8gpu-cpx-nps1", "sys"),
                        "partition", "--json"])
    reference = cli_partitions(json.loads(out)["devices"], "CPX capture") if rc == 0 else {}
    strip = lambda parts: {g: [p[:1] + p[2:] for p in rows] for g, rows in parts.items()}
    check(strip(first) == strip(reference), "CPX: the emulator's partitions differ from the CPX capture's")
    step(emu, "DPX", by_library=False)
    again = step(emu, "SPX", by_library=False)
    check(len(again) == 8, "SPX again: 8 GPUs")
    rc, out, _ = smi(emu, "list", "--json")
    check(rc == 0 and [d["bdf"][:-2] for d in json.loads(out)["devices"]] == sorted(first), "GPU indices moved")

    rc, out, err = smi(emu, "partition", "--memory-mode", "nps4", "-g", "all", "--json")
    doc = json.loads(out) if out else {"results": []}
    check(rc == 6, "NPS4 request: exit %d, expected 6 (pending): %s" % (rc, err))
    check(all(r["outcome"] == "pending" and "modprobe -r amdgpu" in r["next_step"] for r in doc["results"]), "NPS4: not pending")
    for d in second_process(emu, "NPS4 pending"):
        check(d["modes"]["memory_partition"]["value"] == "NPS1", "NPS4 pending: a second process already sees NPS4")
    # Asking for the current mode replaces the pending request: GPU 7 stays NPS1 through the reload.
    rc, out, err = smi(emu, "partition", "--memory-mode", "NPS1", "-g", "7")
    check(rc == 0 and "memory partition NPS1 -> NPS1 (replaces any pending request): done" in out, "NPS1 again: %s%s" % (out, err))
    emu.control("reload")
    devices = second_process(emu, "NPS4 after reload")
    check([d["modes"]["memory_partition"]["value"] for d in devices] == ["NPS4"] * 7 + ["NPS1"], "reload: NPS modes wrong")
    check(cli_partitions(devices, "NPS4") == driver_partitions(emu), "NPS4: partitions differ from the driver's")
    rc, out, _ = run([PROBE, emu.sys])
    check(rc == 0 and probe_partitions(out) == driver_partitions(emu), "NPS4: the library disagrees with the driver")


def non_root_reads(emu):
    for command in (["static", "--json"], ["partition", "--json"], ["topology", "--json"]):
        rc_root, out_root, _ = smi(emu, *command)
        rc, out, err = smi(emu, *command, as_nobody=True)
        check(rc == 0 and rc_root == 0, "non-root %s: rc %d %s" % (command, rc, err))
        check(out == out_root, "non-root %s differs from root's" % command)


def other_controls():
    emu = Emulator(RX5700XT)
    try:
        hw = os.path.join(emu.backing, "sys/class/drm/card1/device/hwmon/hwmon1")
        dev = os.path.join(emu.backing, "sys/class/drm/card1/device")
        rc, out, err = smi(emu, "set", "-g", "0", "--power-cap", "150", "--profile", "compute", "--fan", "40",
                           "--clock-range", "sclk:1400-1850")
        check(rc == 0, "set on the RX 5700 XT: rc %d %s %s" % (rc, out, err))
        check(read(hw + "/power1_cap").strip() == "150000000", "power cap not written")
        check("COMPUTE*:" in read(dev + "/pp_power_profile_mode"), "COMPUTE profile not active")
        check(read(hw + "/pwm1_enable").strip() == "1" and read(hw + "/pwm1").strip() == "102", "fan not at 40%")
        od = read(dev + "/pp_od_clk_voltage")
        check("0: 1400Mhz" in od and "1: 1850Mhz" in od, "sclk range not committed: " + od)
        rc, out, err = smi(emu, "set", "-g", "0", "--fan", "auto")
        check(rc == 0 and read(hw + "/pwm1_enable").strip() == "2", "fan auto: rc %d %s" % (rc, err))
        rc, out, err = smi(emu, "set", "-g", "0", "--clock-range", "sclk:100-5000")
        check(rc == 2 and "not within the driver's range 800..2150 MHz" in out + err, "clock range outside OD_RANGE: %s%s" % (out, err))
        rc, out, err = smi(emu, "set", "-g", "0", "--profile", "CUSTOM")
        check(rc == 2 and "CUSTOM takes heuristic parameters" in out + err, "CUSTOM profile: %s%s" % (out, err))
        rc, out, err = smi(emu, "set", "-g", "0", "--perf-level", "manual")
        check(rc == 4 and "does not exist" in out + err, "perf level without the file: rc %d %s%s" % (rc, out, err))
        rc, out, err = smi(emu, "set", "-g", "0", "--fan", "30", "--dry-run", "--json")
        writes = json.loads(out)["results"][0]["writes"] if rc == 0 else []
        check([(w["path"].rsplit("/", 1)[1], w["value"], w["done"]) for w in writes] ==
              [("pwm1_enable", "1", False), ("pwm1", "77", False)], "fan dry run writes: %s" % writes)
        check(read(hw + "/pwm1_enable").strip() == "2", "fan dry run wrote")
    finally:
        emu.stop()


def main():
    if not os.path.exists("/dev/fuse"):
        print("SKIP: no /dev/fuse")
        return 77
    emu = Emulator(MI300X)
    try:
        rc, out, _ = smi(emu, "list")
        check(rc == 0 and out.count("AMD Instinct MI300X") == 8, "the emulated node shows 8 MI300X")
        refusals(emu)
        non_root_reads(emu)
        partitions_chain(emu)
        non_root_reads(emu)
    finally:
        emu.stop()
    other_controls()
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("partitions and controls on the emulator: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
