#!/usr/bin/env python3
"""hipstack-smi --nvidia-smi against what nvidia-smi 580 prints (docs/nvidia-smi-compat.md): every
field of `nvidia-smi --help-query-gpu`, recorded on the GPU test machine
(captures/recorded/nvidia-smi-580-h100), is accepted by its name and its aliases, with nvidia-smi's
header; values in nvidia-smi's forms on the MI300X captures and the NVML double; -L,
--query-compute-apps, -i in nvidia-smi's forms, -f, -l / -lms, --help-query-gpu and nvidia-smi's own
refusals (words on stdout, exit codes).

Usage: test_nvidia_smi_compat.py HIPSTACK_SMI CAPTURES_DIR
"""
import csv
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

from smi_cli import configure, fake_nvml_env, run, sys_root

SMI = None
CAPTURES = None
SPX, CPX, FAULTS = "constructed/mi300x-8gpu-spx-nps1", "constructed/mi300x-8gpu-cpx-nps1", "constructed/mi300x-8gpu-faults"


def recorded(name):
    return os.path.join(CAPTURES, "recorded", "nvidia-smi-580-h100", name)


def recorded_fields(name="query-gpu-fields.tsv"):
    """[(canonical name, [aliases], header unit)] as nvidia-smi 580 lists them."""
    out = []
    for line in open(recorded(name)):
        if line.startswith("#"):
            continue
        name_, aliases, unit = line.rstrip("\n").split("\t")
        out.append((name_, [a for a in aliases.split(",") if a], unit))
    return out


def header_of(name, unit):
    return f"{name} [{unit}]" if unit else name


def rows(text):
    return list(csv.reader(io.StringIO(text), skipinitialspace=True))


def shape(value):
    """A value's form: digits and hex digits folded, so that "345 MHz" and "1980 MHz" agree."""
    if value.startswith("0x"):
        return "0x" + "H" * (len(value) - 2)
    return re.sub(r"\d+", "9", value)


def catalogue_fields():
    doc = json.loads(run("catalogue", "--json").stdout)
    return {f["name"]: f for f in doc["nvidia_smi_fields"]}, doc


class QueryGpu(unittest.TestCase):
    def test_every_field_nvidia_smi_lists_is_accepted_with_its_header(self):
        fields = recorded_fields()
        self.assertEqual(len(fields), 214)
        names = [n for n, _, _ in fields]
        for root in (sys_root(SPX), sys_root(FAULTS)):
            out = run("--nvidia-smi", "--query-gpu=" + ",".join(names), "--format=csv", "--sysfs-root", root).stdout
            table = rows(out)
            self.assertEqual(table[0], [header_of(n, u) for n, _, u in fields])
            self.assertEqual(len(table), 9)
            self.assertTrue(all(len(r) == 214 for r in table[1:]))
        # Every alias gives the canonical field's header (nvidia-smi's: clocks.sm prints clocks.current.sm [MHz]).
        aliases = [(a, n, u) for n, al, u in fields for a in al]
        self.assertGreater(len(aliases), 40)
        out = run("--nvidia-smi", "--query-gpu=" + ",".join(a for a, _, _ in aliases), "--format=csv", "-i", "0",
                  "--sysfs-root", sys_root(SPX)).stdout
        self.assertEqual(rows(out)[0], [header_of(n, u) for _, n, u in aliases])

    def test_values_have_the_forms_nvidia_smi_printed(self):
        """On the NVML double (an H200), each answered field has the form the real nvidia-smi gave
        on an H100 for it; unanswered ones print nvidia-smi's own "not available" text."""
        env = fake_nvml_env(self, "h200.txt")
        empty = tempfile.mkdtemp(prefix="no-amd-")
        self.addCleanup(os.rmdir, empty)
        fields = recorded_fields()
        proc = subprocess.run([SMI, "--nvidia-smi", "--query-gpu=" + ",".join(n for n, _, _ in fields), "--format=csv",
                               "--sysfs-root", empty], capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        ours = rows(proc.stdout)[1]
        theirs = rows(open(recorded("query-gpu-all.csv")).read())[1]
        table, _ = catalogue_fields()
        held = {}  # what hipstack reads of this GPU: metric -> {instance: status}
        for command in ("metric", "static"):
            device = json.loads(subprocess.run([SMI, command, "--json", "--sysfs-root", empty], capture_output=True,
                                               text=True, env=env, timeout=60, check=True).stdout)["devices"][0]
            for name, r in device["metrics"].items():
                held[name] = {k: v["status"] for k, v in r["instances"].items()} if "instances" in r else {"": r["status"]}
        answered = 0
        for (name, _, _), mine, real in zip(fields, ours, theirs):
            with self.subTest(field=name):
                field = table[name]
                if not field["answered"]:
                    self.assertEqual(mine, field["missing"])
                    continue
                if mine in ("[N/A]", "N/A"):
                    # Not available only where hipstack has no figure: no source metric read ok.
                    for metric in field["from"]:
                        self.assertNotEqual(held.get(metric, {}).get(field["instance"]),
                                            "ok", f"{metric} was read, yet {name} printed {mine}")
                    continue
                answered += 1
                if name not in ("name", "uuid", "vbios_version"):  # text whose shape differs by GPU
                    self.assertEqual(shape(mine), shape(real), (mine, real))
        self.assertGreaterEqual(answered, 60)

    def test_amd_values_match_the_catalogue(self):
        root = sys_root(FAULTS)
        out = run("--nvidia-smi", "--query-gpu=index,pci.domain,pci.bus,pci.device,pci.device_id,pci.sub_device_id,"
                  "ecc.errors.corrected.volatile.dram,ecc.errors.uncorrected.volatile.total,retired_pages.pending,"
                  "clocks.max.graphics,fabric.state,compute_cap", "--format=csv,noheader", "--sysfs-root", root).stdout
        doc = json.loads(run("static", "--json", "--sysfs-root", root).stdout)["devices"]
        live = json.loads(run("metric", "--json", "-m", "ras_correctable,ras_uncorrectable,bad_pages_pending",
                              "--sysfs-root", root).stdout)["devices"]
        for row, facts, now in zip(rows(out), doc, live):
            m, n = facts["metrics"], now["metrics"]
            domain, bus, rest = facts["bdf"].split(":")
            device = rest.split(".")[0]
            self.assertEqual(row[1:4], [f"0x{int(domain, 16):04X}", f"0x{int(bus, 16):02X}", f"0x{int(device, 16):02X}"])
            self.assertEqual(row[4], "0x%04X%04X" % (int(m["pci_device_id"]["value"], 16), int(m["pci_vendor_id"]["value"], 16)))
            self.assertEqual(row[5], "0x%04X%04X" % (int(m["pci_subsystem_device_id"]["value"], 16),
                                                      int(m["pci_subsystem_vendor_id"]["value"], 16)))
            umc = n["ras_correctable"]["instances"]["umc"]
            self.assertEqual(row[6], str(umc["value"]) if umc["status"] == "ok" else "[N/A]")
            total = sum(i["value"] for i in n["ras_uncorrectable"]["instances"].values() if i["status"] == "ok")
            self.assertEqual(row[7], str(total))
            self.assertEqual(row[8], "Yes" if n["bad_pages_pending"]["value"] else "No")
            self.assertEqual(row[9], f"{m['clock_sclk_max']['value']:.0f} MHz")
            self.assertEqual(row[10:], ["N/A", "[N/A]"])  # nvidia-smi's own forms; compute_cap is CUDA's

    def test_refusals_are_nvidia_smis(self):
        root = sys_root(FAULTS)
        proc = run("--nvidia-smi", "--query-gpu=index,temprature.gpu", "--format=csv", "--sysfs-root", root, expect=2)
        self.assertEqual(proc.stdout, 'Field "temprature.gpu" is not a valid field to query.\n\n')
        self.assertIn("Did you mean temperature.gpu?", proc.stderr)
        for fmt in ("--format=json", "--format=csv,noheadr"):
            proc = run("--nvidia-smi", "--query-gpu=index", fmt, "--sysfs-root", root, expect=2)
            self.assertEqual(proc.stdout, "Format modifier is not recognized.\n")
        for ids in ("9", "GPU-00000000-0000-0000-0000-000000000000", "00000000:AB:00.0"):
            proc = run("--nvidia-smi", "--query-gpu=index", "-i", ids, "--sysfs-root", root, expect=6)
            self.assertEqual(proc.stdout, "No devices were found\n")
        # nvidia-smi's record of each refusal, as it printed them.
        self.assertEqual(open(recorded("bad-field.txt")).read(), 'Field "no.such.field" is not a valid field to query.\n\n')
        self.assertEqual(open(recorded("bad-format.txt")).read(), "Format modifier is not recognized.\n")
        self.assertEqual(open(recorded("bad-id.txt")).read(), "No devices were found\n")
        # Without --format nvidia-smi answers in CSV with its header, as here.
        self.assertEqual(open(recorded("no-format.txt")).read(), "index\n0\n")
        self.assertEqual(run("--nvidia-smi", "--query-gpu=index", "-i", "3", "--sysfs-root", root).stdout, "index\n3\n")
        # Each of nvidia-smi's other refusals, word for word and with its exit code, as recorded.
        for args, record, code in ((["--query-gpu=index", "-lms", "0"], "bad-loop-ms.txt", 2),
                                   (["--query-gpu=index", "--format=csv", "-q"], "mixed-modes.txt", 2),
                                   (["-q", "-d", "BOGUS"], "q-bad-display.txt", 2),
                                   (["dmon", "-s", "z", "-c", "1"], "dmon-bad-select.txt", 255),
                                   (["dmon", "-o", "X", "-c", "1"], "dmon-bad-option.txt", 255),
                                   (["dmon", "-c", "x"], "dmon-bad-count.txt", 0),
                                   (["dmon", "-d", "0", "-c", "1"], "dmon-bad-delay.txt", 0)):
            with self.subTest(args=args):
                theirs = open(recorded(record)).read()
                proc = run("--nvidia-smi", *args, "--sysfs-root", root, expect=code)
                # dmon's -c and -d refusals go on with its usage text, which is NVIDIA's own prose.
                self.assertEqual(proc.stdout, theirs if code != 0 else theirs.split("\n")[0] + "\n\n")
        # An empty field list is no error to nvidia-smi: an empty header and an empty row a GPU.
        self.assertEqual(open(recorded("no-fields.txt")).read(), "\n\n")
        self.assertEqual(run("--nvidia-smi", "--query-gpu=", "--format=csv", "-i", "0", "--sysfs-root", root).stdout, "\n\n")
        for bad in (["-pm", "1"], ["--format=csv"]):
            with self.subTest(args=bad):
                proc = run("--nvidia-smi", *bad, "--sysfs-root", root, expect=2)
                self.assertIn("hipstack-smi --nvidia-smi:", proc.stderr)

    def test_started_as_nvidia_smi(self):
        """By the name nvidia-smi (hipstack-nvidia-smi's alternative, a link here) the command line is
        nvidia-smi's: the same answers as --nvidia-smi, and --nvidia-smi itself is an unknown option."""
        root = sys_root(CPX)
        folder = tempfile.mkdtemp(prefix="as-nvidia-smi-")
        self.addCleanup(shutil.rmtree, folder)
        link = os.path.join(folder, "nvidia-smi")
        os.symlink(os.path.abspath(SMI), link)
        for args in (["-L"], ["--query-gpu=index,name,pci.bus_id,memory.total", "--format=csv"],
                     ["--query-gpu=index,temprature.gpu", "--format=csv"], ["-q", "-d", "MEMORY", "-i", "3"]):
            with self.subTest(args=args):
                theirs = run("--nvidia-smi", *args, "--sysfs-root", root, expect=None)
                ours = subprocess.run([link, *args, "--sysfs-root", root], capture_output=True, text=True, timeout=60)
                # -q's "Timestamp" line is each run's own time: two runs a second apart differ there alone.
                untimed = lambda text: re.sub(r"(?m)^(Timestamp\s*:).*$", r"\1", text)  # noqa: E731
                self.assertEqual((ours.returncode, untimed(ours.stdout)), (theirs.returncode, untimed(theirs.stdout)))
        self.assertRegex(subprocess.run([link, "-L", "--sysfs-root", root], capture_output=True, text=True,
                                        timeout=60).stdout, r"^GPU 0: .*\(UUID: ")
        refused = subprocess.run([link, "--nvidia-smi", "-L", "--sysfs-root", root], capture_output=True, text=True, timeout=60)
        self.assertEqual(refused.returncode, 2, refused.stdout + refused.stderr)
        self.assertIn("--nvidia-smi", refused.stderr)

    def test_id_in_every_form_nvidia_smi_takes(self):
        root = sys_root(FAULTS)
        listed = json.loads(run("list", "--json", "--sysfs-root", root).stdout)["devices"]
        gpu = listed[6]
        bdf = gpu["bdf"]  # "0000:c7:00.0"
        for form in ("6", gpu["uuid"], "0000" + bdf.upper(), "0000" + bdf, bdf, bdf[5:].upper(), "6,6"):
            with self.subTest(id=form):
                self.assertEqual(run("--nvidia-smi", "--query-gpu=index,pci.bus_id", "--format=csv,noheader", "-i", form,
                                     "--sysfs-root", root).stdout, f"6, 0000{bdf.upper()}\n")
        self.assertEqual(run("--nvidia-smi", "--query-gpu=index", "--format=csv,noheader", "--id=5,1",
                             "--sysfs-root", root).stdout, "1\n5\n")


class OtherModes(unittest.TestCase):
    def test_list_gpus(self):
        root = sys_root(CPX)
        listed = json.loads(run("list", "--json", "--sysfs-root", root).stdout)["devices"]
        out = run("--nvidia-smi", "-L", "--sysfs-root", root).stdout
        self.assertEqual(out, "".join(f"GPU {d['index']}: {d['name']} (UUID: {d['uuid']})\n" for d in listed))
        self.assertRegex(open(recorded("L.txt")).read(), r"^GPU 0: NVIDIA H100 80GB HBM3 \(UUID: GPU-[0-9a-f-]{36}\)\n$")

    def test_compute_apps(self):
        base = os.path.join(CAPTURES, SPX)
        roots = ("--sysfs-root", os.path.join(base, "sys"), "--procfs-root", os.path.join(base, "proc"))
        out = run("--nvidia-smi", "--query-compute-apps=pid,process_name,used_memory,gpu_uuid,gpu_bus_id,gpu_name",
                  "--format=csv", *roots).stdout
        table = rows(out)
        self.assertEqual(table[0], ["pid", "process_name", "used_gpu_memory [MiB]", "gpu_uuid", "gpu_bus_id", "gpu_name"])
        self.assertEqual(table[0], rows(open(recorded("apps-empty.txt")).read())[0])  # nvidia-smi's header
        expected = []
        listed = json.loads(run("list", "--json", *roots).stdout)["devices"]
        for device in listed:
            doc = json.loads(run("process", "--json", "-g", str(device["index"]), *roots).stdout)
            for p in doc["devices"][0]["processes"]:
                vram = p["metrics"].get("process_vram", {})
                used = f"{-(-vram['value'] // 2**20)} MiB" if vram.get("status") == "ok" else "[N/A]"
                program = (p.get("command_line") or "").split(" ")[0] or p["name"]
                expected.append([str(p["pid"]), program, used, device["uuid"], "0000" + device["bdf"].upper(),
                                 device["name"]])
        self.assertGreater(len(expected), 0)
        self.assertEqual(sorted(table[1:]), sorted(expected))
        self.assertEqual(run("--nvidia-smi", "--query-compute-apps=pid", "--format=csv,noheader", "-i", "0",
                             "--sysfs-root", os.path.join(base, "sys"), "--procfs-root", tempfile.gettempdir()).stdout, "")

    def test_loop_prints_rounds_until_interrupted(self):
        proc = subprocess.Popen([SMI, "--nvidia-smi", "--query-gpu=timestamp,index", "--format=csv", "-i", "0",
                                 "-lms", "100", "--sysfs-root", sys_root(SPX)], stdout=subprocess.PIPE, text=True)
        try:
            lines = [proc.stdout.readline() for _ in range(3)]  # the header, then a row a round
            proc.send_signal(signal.SIGINT)
            rest = proc.stdout.read()
            self.assertEqual(proc.wait(timeout=30), 0)
        finally:
            proc.kill()
            proc.wait()
        self.assertEqual(lines[0], "timestamp, index\n")
        stamp = r"\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{3}, 0\n"
        for line in lines[1:] + rest.splitlines(keepends=True):
            self.assertRegex(line, stamp)
        self.assertLess(lines[1], lines[2])  # a later round, a later time
        self.assertRegex(open(recorded("loop-ms.txt")).read(), r"^timestamp, index\n(" + stamp + "){3}$")

    def test_file_output_never_follows_a_link(self):
        folder = tempfile.mkdtemp(prefix="nvsmi-f-")
        target = os.path.join(folder, "out.csv")
        run("--nvidia-smi", "--query-gpu=index", "--format=csv,noheader", "-f", target, "--sysfs-root", sys_root(SPX))
        self.assertEqual(open(target).read(), "".join(f"{i}\n" for i in range(8)))
        victim = os.path.join(folder, "victim")
        with open(victim, "w") as f:
            f.write("keep\n")
        os.symlink(victim, os.path.join(folder, "link.csv"))
        proc = run("--nvidia-smi", "--query-gpu=index", "--format=csv", "-f", os.path.join(folder, "link.csv"),
                   "--sysfs-root", sys_root(SPX), expect=1)
        self.assertIn("cannot write", proc.stderr)
        self.assertEqual(open(victim).read(), "keep\n")
        # A FIFO nobody reads: refused at once (ENXIO), never a wait without end.
        fifo = os.path.join(folder, "fifo")
        os.mkfifo(fifo)
        proc = run("--nvidia-smi", "--query-gpu=index", "--format=csv", "-f", fifo, "--sysfs-root", sys_root(SPX), expect=1)
        self.assertIn("cannot write", proc.stderr)

    def test_dmon_columns_are_nvidia_smis(self):
        root = sys_root(FAULTS)
        for args, record in ((["-s", "pucvmet"], "dmon-s.txt"), ([], "dmon.txt"), (["-o", "DT"], "dmon-o.txt")):
            with self.subTest(args=args):
                theirs = open(recorded(record)).read().splitlines()
                ours = run("--nvidia-smi", "dmon", "-c", "2", "-i", "1,6", *args, "--sysfs-root", root).stdout.splitlines()
                self.assertEqual(ours[:2], theirs[:2])  # the two header lines, byte for byte
                self.assertEqual(len(ours), 2 + 2 * 2)  # two rounds of two GPUs
                for line in ours[2:]:
                    self.assertEqual(len(line), len(theirs[2]), line)  # every column 7 wide, as nvidia-smi's
                    self.assertTrue(line.endswith(" "), line)
        doc = {d["index"]: d["metrics"] for d in json.loads(run("metric", "--json", "--sysfs-root", root).stdout)["devices"]}
        ours = run("--nvidia-smi", "dmon", "-s", "pucvmet", "-c", "1", "--sysfs-root", root).stdout.splitlines()
        names = ours[0][1:].split()
        for line in ours[2:]:
            cells = dict(zip(names, line.split()))
            m = doc[int(cells["gpu"])]
            value = lambda name: m[name]["value"] if m.get(name, {}).get("status") == "ok" else None  # noqa: E731
            power = value("power_average") if value("power_average") is not None else value("power_current")
            self.assertEqual(cells["pwr"], str(int(power)))
            self.assertEqual(cells["gtemp"], f"{value('temperature_junction'):.0f}")
            self.assertEqual(cells["sm"], f"{value('gpu_busy'):.0f}")
            self.assertEqual(cells["mclk"], f"{value('clock_mclk'):.0f}")
            self.assertEqual(cells["pclk"], f"{value('clock_sclk'):.0f}")
            self.assertEqual(cells["fb"], str(value("vram_used") // 2**20))
            self.assertEqual(cells["jpg"], "-")  # no figure: nvidia-smi's dash
        # -o T alone: the time column only, as nvidia-smi lays it out.
        theirs = open(recorded("dmon-o-t.txt")).read().splitlines()
        ours = run("--nvidia-smi", "dmon", "-o", "T", "-c", "1", "-i", "0", "--sysfs-root", root).stdout.splitlines()
        self.assertEqual(ours[:2], theirs[:2])
        self.assertEqual(len(ours[2]), len(theirs[2]))

    def test_query_report_has_nvidia_smis_layout(self):
        """-q -d with every section: the same lines as nvidia-smi's report, label for label at the
        same indentation and column (values aside); each value the query field's."""
        env = fake_nvml_env(self, "h200.txt")
        empty = tempfile.mkdtemp(prefix="no-amd-")
        self.addCleanup(os.rmdir, empty)
        sections = "MEMORY,UTILIZATION,TEMPERATURE,POWER,CLOCK,ECC,PIDS,PERFORMANCE"
        proc = subprocess.run([SMI, "--nvidia-smi", "-q", "-d", sections, "--sysfs-root", empty], capture_output=True,
                              text=True, env=env, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        labels = lambda text: [line.split(": ")[0] for line in text.splitlines()]  # noqa: E731
        self.assertEqual(labels(proc.stdout), labels(open(recorded("q-d-all.txt")).read()))
        lines = {}
        for line in proc.stdout.splitlines():
            if ": " in line:
                label, value = line.rsplit(": ", 1)
                lines.setdefault(label, value)  # the first: FB memory's Total, not BAR1's
        query = subprocess.run([SMI, "--nvidia-smi", "--query-gpu=memory.total,power.max_limit,temperature.gpu,pstate",
                                "--format=csv,noheader", "--sysfs-root", empty], capture_output=True, text=True, env=env,
                               timeout=60, check=True).stdout.strip().split(", ")
        self.assertIn(f"        Total{' ' * 42}", lines)
        self.assertEqual(lines[f"        Total{' ' * 42}"], query[0])
        self.assertEqual(lines[f"        Max Power Limit{' ' * 32}"], query[1])
        self.assertEqual(lines[f"        GPU Current Temp{' ' * 31}"], query[2] + " C")
        self.assertEqual(lines[f"    Performance State{' ' * 34}"], query[3])
        # One section, on AMD GPUs: only its lines, N/A where there is no figure.
        out = run("--nvidia-smi", "-q", "-d", "TEMPERATURE", "-i", "2", "--sysfs-root", sys_root(FAULTS)).stdout
        self.assertEqual([l.strip().split(" ")[0] for l in out.splitlines() if l.startswith("    ")][:2], ["Temperature", "GPU"])
        self.assertNotIn("Power Readings", out)
        bdf = json.loads(run("list", "--json", "--sysfs-root", sys_root(FAULTS)).stdout)["devices"][2]["bdf"]
        self.assertIn(f"GPU 0000{bdf.upper()}\n", out)

    def test_plain_query_report_and_its_processes(self):
        """-q alone: the identity block (each of its lines one of nvidia-smi's report, at the same
        depth, in nvidia-smi's order), then every section; the Processes block as nvidia-smi's."""
        env = fake_nvml_env(self, "h100x2-mig.txt")
        empty = tempfile.mkdtemp(prefix="no-amd-")
        self.addCleanup(os.rmdir, empty)
        proc = subprocess.run([SMI, "--nvidia-smi", "-q", "-i", "1", "--sysfs-root", empty], capture_output=True, text=True,
                              env=env, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        ours = proc.stdout.splitlines()
        theirs = [l.split(" : ")[0].rstrip() for l in open(recorded("q.txt")).read().splitlines()]
        start = ours.index("GPU 00000000:2A:00.0")
        identity = [l.split(" : ")[0].rstrip() for l in ours[start + 1:ours.index("    Performance State".ljust(55) + ": P0")]]
        self.assertGreater(len(identity), 20)
        at = 0
        for label in identity:  # a subsequence of nvidia-smi's report: same labels, same depths, same order
            self.assertIn(label, theirs[at:], label)
            at = theirs.index(label, at) + 1
        self.assertIn("    Product Name".ljust(55) + ": NVIDIA H100 80GB HBM3", ours)
        for section in ("    FB Memory Usage", "    Temperature", "    Clocks", "    ECC Mode"):
            self.assertIn(section, ours)
        # The processes of a MIG GPU: NVML's instance ids, type C, the program, its memory (process --json).
        doc = json.loads(subprocess.run([SMI, "process", "--json", "-g", "1", "--sysfs-root", empty], capture_output=True,
                                        text=True, env=env, timeout=60, check=True).stdout)["devices"][0]["processes"]
        block = ours[ours.index("    Processes"):]
        for p in doc:
            m = p["metrics"]
            line = lambda depth, label, value: (" " * 4 * depth + label).ljust(42) + ": " + value  # noqa: E731
            i = block.index(line(2, "Process ID", str(p["pid"])))
            self.assertEqual(block[i - 2], line(2, "GPU instance ID", str(m["process_gpu_instance_id"]["value"])))
            self.assertEqual(block[i - 1], line(2, "Compute instance ID", str(m["process_compute_instance_id"]["value"])))
            self.assertEqual(block[i + 1], line(3, "Type", "C"))
            self.assertEqual(block[i + 2], line(3, "Name", p["name"] or "N/A"))  # no such process here: no name
            self.assertEqual(block[i + 3], line(3, "Used GPU Memory", "%d MiB" % -(-m["process_vram"]["value"] // 2**20)))
        self.assertGreater(len(doc), 0)

    def test_help_query_gpu_lists_every_field_and_its_source(self):
        text = run("--nvidia-smi", "--help-query-gpu").stdout
        table, doc = catalogue_fields()
        for name, aliases, _ in recorded_fields():
            heading = " or ".join(f'"{n}"' for n in [name] + aliases)
            self.assertIn("\n" + heading + "\n", text)
            self.assertIn(name, table)
            if not table[name]["answered"]:
                self.assertTrue(table[name]["note"], name)  # a reason for every [N/A]
        self.assertIn('"power.draw"\n    from power_average, else power_current', text)
        # The catalogue names each metric's nvidia-smi fields.
        metrics = {m["name"]: m for m in doc["metrics"]}
        self.assertIn("memory.total", metrics["vram_total"]["nvidia_smi"])
        self.assertIn("clocks.current.sm", metrics["clock_sclk"]["nvidia_smi"])
        apps = run("--nvidia-smi", "--help-query-compute-apps").stdout
        for name, aliases, _ in recorded_fields("query-compute-apps-fields.tsv"):
            self.assertIn(" or ".join(f'"{n}"' for n in [name] + aliases), apps)

    def test_text_from_the_system_is_escaped(self):
        """A process name with terminal controls (from /proc) reaches the output escaped."""
        base = os.path.join(CAPTURES, SPX)
        proc_root = tempfile.mkdtemp(prefix="nvsmi-proc-")
        subprocess.run(["cp", "-a", os.path.join(base, "proc") + "/.", proc_root], check=True)
        pid = sorted(os.listdir(proc_root))[0]
        with open(os.path.join(proc_root, pid, "cmdline"), "wb") as f:
            f.write(b"\x1b]0;pwned\x07evil\x1b[2J\0-x\0")
        out = run("--nvidia-smi", "--query-compute-apps=pid,process_name", "--format=csv,noheader",
                  "--sysfs-root", os.path.join(base, "sys"), "--procfs-root", proc_root).stdout
        self.assertNotIn("\x1b", out)
        self.assertNotIn("\x07", out)
        self.assertIn(pid + ", ", out)


if __name__ == "__main__":
    SMI, CAPTURES = configure(sys.argv[1], sys.argv[2])
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
