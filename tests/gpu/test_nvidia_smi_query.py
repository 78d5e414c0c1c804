#!/usr/bin/env python3
"""hipstack-smi --nvidia-smi against the real nvidia-smi (ctest label `gpu`; 77 = skipped).

Usage: test_nvidia_smi_query.py HIPSTACK_SMI [--markdown FILE]

Reads only. Every field `nvidia-smi --help-query-gpu` lists (captures/recorded/nvidia-smi-580-h100/
query-gpu-fields.tsv) is asked of nvidia-smi right before and right after hipstack-smi, all at once,
in the same --format=csv form: a static field must print exactly as nvidia-smi prints it; a live
one (power, clocks, use, temperatures, memory use, reasons) in nvidia-smi's form (same unit, same
decimals) with a value within the range of nvidia-smi's two reads, widened by the field's slack; a
field hipstack has no figure for must print the "not available" text its table names (and is
listed with its reason). Then -L, --query-compute-apps (with a process of its own on the GPU when
torch is there), -i in nvidia-smi's bus-id form and --format=csv,nounits, each against nvidia-smi.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIELD_LIST = os.path.join(HERE, "..", "..", "captures", "recorded", "nvidia-smi-580-h100", "query-gpu-fields.tsv")

# Live fields and their slack in the field's unit (None: only the form is compared).
LIVE = {
    "timestamp": None, "pstate": 0, "pcie.link.gen.current": 0, "pcie.link.gen.gpucurrent": 0,
    "pcie.link.width.current": 0, "temperature.gpu": 2, "temperature.memory": 2, "power.draw": 30,
    "power.draw.average": 30, "power.draw.instant": 60, "clocks.current.graphics": 100, "clocks.current.sm": 100,
    "clocks.current.memory": 0, "clocks.current.video": 100, "utilization.gpu": 5, "utilization.memory": 5,
    "utilization.encoder": 5, "utilization.decoder": 5, "memory.used": 64, "memory.free": 64, "memory.reserved": 0,
    "clocks_event_reasons.active": None, "clocks_event_reasons.gpu_idle": None,
    "clocks_event_reasons.applications_clocks_setting": None, "clocks_event_reasons.sw_power_cap": None,
    "clocks_event_reasons.hw_slowdown": None, "clocks_event_reasons.hw_thermal_slowdown": None,
    "clocks_event_reasons.hw_power_brake_slowdown": None, "clocks_event_reasons.sw_thermal_slowdown": None,
    "clocks_event_reasons.sync_boost": None,
}


def fields():
    return [line.split("\t")[0] for line in open(FIELD_LIST) if not line.startswith("#")]


def csv_rows(text):
    return [line.split(", ") for line in text.splitlines()]


def query(command, names, form="csv,noheader"):
    proc = subprocess.run(command + [f"--query-gpu={','.join(names)}", f"--format={form}"],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"{command[0]}: exit {proc.returncode}: {proc.stderr or proc.stdout}")
    return csv_rows(proc.stdout)


def shape(text):
    return "0x" + "H" * (len(text) - 2) if text.startswith("0x") else re.sub(r"\d+", "9", text)


def number_and_form(text):
    """'69.97 W' -> (69.97, (2, 'W')); None for text."""
    m = re.fullmatch(r"(-?\d+(?:\.(\d+))?)(?: (\S+))?", text)
    if not m:
        return None, None
    return float(m.group(1)), (len(m.group(2) or ""), m.group(3))


def agrees(field, nv1, mine, nv2):
    if mine in (nv1, nv2):
        return True
    if field not in LIVE:
        return False
    slack = LIVE[field]
    if slack is None:
        return shape(mine) in (shape(nv1), shape(nv2))
    n1, form1 = number_and_form(nv1)
    n2, _ = number_and_form(nv2)
    n, form = number_and_form(mine)
    return (n is not None and n1 is not None and n2 is not None and form == form1
            and min(n1, n2) - slack <= n <= max(n1, n2) + slack)


def same(what, ours, theirs, failures, notes):
    ok = ours == theirs
    notes.append((what, theirs.strip(), ours.strip(), "yes" if ok else "NO"))
    if not ok:
        failures.append(f"{what}: hipstack-smi {ours!r}, nvidia-smi {theirs!r}")


def other_modes(smi, failures, notes):
    run = lambda *a: subprocess.run(list(a), capture_output=True, text=True, timeout=120).stdout  # noqa: E731
    same("-L", run(smi, "--nvidia-smi", "-L"), run("nvidia-smi", "-L"), failures, notes)
    bus = run("nvidia-smi", "--query-gpu=pci.bus_id", "--format=csv,noheader").splitlines()[0]
    for ids in (bus, bus.lower(), bus[4:]):
        same(f"-i {ids}", run(smi, "--nvidia-smi", "--query-gpu=index,uuid", "--format=csv", "-i", ids),
             run("nvidia-smi", "--query-gpu=index,uuid", "--format=csv", "-i", ids), failures, notes)
    static = "index,memory.total,power.max_limit,clocks.max.sm,pci.device_id"
    same("--format=csv,nounits", run(smi, "--nvidia-smi", f"--query-gpu={static}", "--format=csv,nounits"),
         run("nvidia-smi", f"--query-gpu={static}", "--format=csv,nounits"), failures, notes)
    apps = "--query-compute-apps=gpu_name,gpu_bus_id,gpu_serial,gpu_uuid,pid,process_name,used_memory"
    holder = None
    if shutil.which("python3"):
        holder = subprocess.Popen(["python3", "-c", "import torch,sys; x=torch.ones(1<<20,device='cuda');"
                                   "torch.cuda.synchronize(); print('ready',flush=True); sys.stdin.read()"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if holder.stdout.readline().strip() != "ready":
            holder.kill()
            holder.wait()
            holder = None
    try:
        theirs = run("nvidia-smi", apps, "--format=csv")
        same(apps, run(smi, "--nvidia-smi", apps, "--format=csv"), theirs, failures, notes)
        if holder is not None and str(holder.pid) not in theirs:
            failures.append(f"the test's own GPU process {holder.pid} is not in nvidia-smi's list")
    finally:
        if holder is not None:
            holder.stdin.close()
            holder.wait(timeout=60)


def main():
    smi = sys.argv[1]
    markdown = sys.argv[sys.argv.index("--markdown") + 1] if "--markdown" in sys.argv else None
    if shutil.which("nvidia-smi") is None:
        print("SKIP: no nvidia-smi here")
        return 77
    table = {f["name"]: f for f in json.loads(subprocess.run([smi, "catalogue", "--json"], capture_output=True,
                                                              text=True, check=True, timeout=60).stdout)["nvidia_smi_fields"]}
    # What hipstack reads of each GPU: an answered field may print [N/A] only where none of its
    # source metrics was read (a figure hipstack has for AMD GPUs only, say).
    held = []
    for command in ("metric", "static"):
        devices = json.loads(subprocess.run([smi, command, "--json", "--direct"], capture_output=True, text=True, check=True,
                                            timeout=120).stdout)["devices"]
        for i, device in enumerate(devices):
            if len(held) <= i:
                held.append({})
            for name, r in device["metrics"].items():
                held[i][name] = {k: v["status"] for k, v in r["instances"].items()} if "instances" in r else {"": r["status"]}
    names = fields()
    before = query(["nvidia-smi"], names)
    start = time.perf_counter()
    ours = query([smi, "--nvidia-smi"], names)
    took = time.perf_counter() - start
    after = query(["nvidia-smi"], names)
    failures, rows, notes = [], [], []
    if len(ours) != len(before):
        failures.append(f"{len(ours)} GPUs from hipstack-smi, {len(before)} from nvidia-smi")
    for gpu, (b, o, a) in enumerate(zip(before, ours, after)):
        for i, field in enumerate(names):
            nv1, mine, nv2 = b[i], o[i], a[i]
            f = table[field]
            unread = not any(held[gpu].get(m, {}).get(f["instance"]) == "ok" for m in f["from"])
            if not f["answered"] or (mine == f["missing"] and unread and nv1 != mine):
                ok = mine == f["missing"]
                verdict = "N/A: " + f["note"] if ok else "NO"
            else:
                ok = agrees(field, nv1, mine, nv2)
                verdict = "yes" if ok else "NO"
            rows.append((gpu, field, nv1, mine, nv2, verdict))
            if not ok:
                failures.append(f"GPU {gpu} {field}: hipstack-smi {mine!r}, nvidia-smi {nv1!r} then {nv2!r}")
    other_modes(smi, failures, notes)
    for gpu, field, nv1, mine, nv2, ok in rows:
        print(f"GPU {gpu}  {field:45} nvidia-smi {nv1!r:26} hipstack-smi {mine!r:26} then {nv2!r:26} {ok}")
    for what, theirs, mine, ok in notes:
        print(f"{what}: {ok}\n  nvidia-smi:   {theirs!r}\n  hipstack-smi: {mine!r}")
    agreed = sum(1 for r in rows if r[5] == "yes")
    documented = sum(1 for r in rows if r[5].startswith("N/A"))
    if markdown:
        with open(markdown, "w") as out:
            out.write(f"{agreed} fields agree, {documented} print [N/A] as documented, "
                      f"{len(rows) - agreed - documented} differ; all {len(names)} fields in one query: "
                      f"{took * 1000:.0f} ms\n\n"
                      "| GPU | field | nvidia-smi | hipstack-smi --nvidia-smi | nvidia-smi after | agrees |\n"
                      "|---|---|---|---|---|---|\n")
            for gpu, field, nv1, mine, nv2, ok in rows:
                out.write(f"| {gpu} | `{field}` | {nv1} | {mine} | {nv2} | {ok} |\n")
            out.write("\n| mode | agrees |\n|---|---|\n")
            for what, _, _, ok in notes:
                out.write(f"| `{what}` | {ok} |\n")
    for f in failures:
        print("FAIL:", f)
    print(f"{agreed} of {len(rows)} fields agree, {documented} documented [N/A]; {len(notes)} modes checked; "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
