#!/usr/bin/env python3
"""hipstack-smi --nvidia-smi --query-gpu against real nvidia-smi (ctest label `gpu`; 77 = skipped).

Usage: test_nvidia_smi_query.py HIPSTACK_SMI [--markdown FILE]

Reads only. Each field is asked of nvidia-smi right before and right after hipstack-smi, in the same
--format=csv,noheader form: a static field must print exactly as nvidia-smi prints it; a live one
(power, clocks, use, temperatures, memory use) must have nvidia-smi's form (same unit, same decimals)
and a value within the range of nvidia-smi's two reads, widened by the field's slack.
"""
import re
import shutil
import subprocess
import sys

# field, live?, slack (in the field's unit) for live fields
FIELDS = [
    ("index", False, 0), ("count", False, 0), ("name", False, 0), ("uuid", False, 0), ("serial", False, 0),
    ("pci.bus_id", False, 0), ("driver_version", False, 0), ("vbios_version", False, 0),
    ("memory.total", False, 0), ("power.limit", False, 0), ("enforced.power.limit", False, 0),
    ("power.default_limit", False, 0), ("power.min_limit", False, 0), ("power.max_limit", False, 0),
    ("clocks.max.sm", False, 0), ("clocks.max.mem", False, 0), ("pcie.link.gen.max", False, 0),
    ("pcie.link.width.max", False, 0), ("persistence_mode", False, 0), ("mig.mode.current", False, 0),
    ("ecc.mode.current", False, 0), ("ecc.errors.corrected.volatile.total", False, 0),
    ("ecc.errors.uncorrected.volatile.total", False, 0), ("ecc.errors.corrected.aggregate.total", False, 0),
    ("ecc.errors.uncorrected.aggregate.total", False, 0), ("fan.speed", False, 0),
    ("pstate", True, 0), ("pcie.link.gen.current", True, 0), ("pcie.link.width.current", True, 0),
    ("temperature.gpu", True, 2), ("temperature.memory", True, 2), ("power.draw", True, 30),
    ("power.draw.average", True, 30), ("power.draw.instant", True, 60), ("clocks.sm", True, 100),
    ("clocks.gr", True, 100), ("clocks.mem", True, 0), ("clocks.video", True, 100),
    ("utilization.gpu", True, 5), ("utilization.memory", True, 5), ("memory.used", True, 64),
    ("memory.free", True, 64), ("memory.reserved", True, 0),
]


def query(command, fields):
    proc = subprocess.run(command + [f"--query-gpu={','.join(fields)}", "--format=csv,noheader"],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"{command[0]}: exit {proc.returncode}: {proc.stderr or proc.stdout}")
    return [line.split(", ") for line in proc.stdout.splitlines()]


def number_and_form(text):
    """'69.97 W' -> (69.97, r'^\\d+\\.\\d\\d W$'-like form); None for text."""
    m = re.fullmatch(r"(-?\d+(?:\.(\d+))?)(?: (\S+))?", text)
    if not m:
        return None, None
    return float(m.group(1)), (len(m.group(2) or ""), m.group(3))


def main():
    smi = sys.argv[1]
    markdown = sys.argv[sys.argv.index("--markdown") + 1] if "--markdown" in sys.argv else None
    if shutil.which("nvidia-smi") is None:
        print("SKIP: no nvidia-smi here")
        return 77
    names = [f for f, _, _ in FIELDS]
    before = query(["nvidia-smi"], names)
    ours = query([smi, "--nvidia-smi"], names)
    after = query(["nvidia-smi"], names)
    failures, rows = [], []
    if len(ours) != len(before):
        failures.append(f"{len(ours)} GPUs from hipstack-smi, {len(before)} from nvidia-smi")
    for gpu, (b, o, a) in enumerate(zip(before, ours, after)):
        for i, (field, live, slack) in enumerate(FIELDS):
            nv1, mine, nv2 = b[i], o[i], a[i]
            if not live or mine == nv1 or mine == nv2:
                ok = mine in (nv1, nv2)
            else:
                n1, form1 = number_and_form(nv1)
                n2, _ = number_and_form(nv2)
                n, form = number_and_form(mine)
                ok = (n is not None and n1 is not None and n2 is not None and form == form1
                      and min(n1, n2) - slack <= n <= max(n1, n2) + slack)
            rows.append((gpu, field, nv1, mine, nv2, "yes" if ok else "NO"))
            if not ok:
                failures.append(f"GPU {gpu} {field}: hipstack-smi {mine!r}, nvidia-smi {nv1!r} then {nv2!r}")
    for gpu, field, nv1, mine, nv2, ok in rows:
        print(f"GPU {gpu}  {field:40} nvidia-smi {nv1!r:28} hipstack-smi {mine!r:28} then {nv2!r:28} {ok}")
    if markdown:
        with open(markdown, "w") as out:
            out.write("| GPU | field | nvidia-smi | hipstack-smi --nvidia-smi | nvidia-smi after | agrees |\n"
                      "|---|---|---|---|---|---|\n")
            for gpu, field, nv1, mine, nv2, ok in rows:
                out.write(f"| {gpu} | `{field}` | {nv1} | {mine} | {nv2} | {ok} |\n")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(rows) - len(failures)} of {len(rows)} fields agree")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
