#!/usr/bin/env python3
"""hipstack-smi's views for people on bundled captures: the default view, query, topology, units and
what tables say beside a value (issue 15). Machine outputs, selection and exit codes: test_cli.py.

Usage: test_views.py HIPSTACK_SMI CAPTURES_DIR
"""
import csv
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

from smi_cli import assert_fake_nvml, configure, run, sys_root

SMI = None
CAPTURES = None


def gpu_rows(text):
    """The default view's GPU table: its header line and one list of cells per row."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("GPU NAME"))
    rows = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        rows.append(line)
    return lines[start], rows


def cells_of(header, row):
    """A default-view row cut at its header's column starts: {"GPU": "0", "TEMP": "35°C", ...}."""
    names = ("GPU", "NAME", "TEMP", "POWER/CAP", "VRAM USED/TOTAL", "BUSY", "SCLK/MCLK", "MODE", "HEALTH")
    starts = [header.index(n) for n in names] + [None]
    return {n: row[starts[i]:starts[i + 1]].strip() for i, n in enumerate(names)}


class DefaultView(unittest.TestCase):
    """hipstack-smi with no command: one screen, 80 columns, every GPU and its processes (issue 15)."""

    def test_fits_80_columns_with_one_row_per_gpu(self):
        for name in ("constructed/mi300x-8gpu-spx-nps1", "constructed/mi300x-8gpu-cpx-nps1",
                     "constructed/mi300x-8gpu-faults"):
            with self.subTest(capture=name):
                out = run("--sysfs-root", sys_root(name)).stdout
                for line in out.splitlines():
                    self.assertLessEqual(len(line), 80, line)
                self.assertNotIn("\x1b", out)  # not a terminal: no colour
                header, rows = gpu_rows(out)
                self.assertEqual([r.split()[0] for r in rows], [str(i) for i in range(8)])
                self.assertTrue(out.startswith("hipstack-smi "), out)
                self.assertRegex(out.splitlines()[1], f"^capture .*{name}/sys$")
                self.assertIn("PID", out)  # the bundled captures have GPU processes

    def test_a_long_capture_path_is_cut_to_fit(self):
        with tempfile.TemporaryDirectory() as tmp:
            deep = os.path.join(tmp, *(["a-long-folder-name"] * 6), "node")
            os.makedirs(deep)
            os.symlink(os.path.abspath(sys_root("constructed/mi300x-8gpu-spx-nps1")), os.path.join(deep, "sys"))
            out = run("--sysfs-root", os.path.join(deep, "sys")).stdout
            origin = out.splitlines()[1]
            self.assertEqual(len(origin), 80, origin)
            self.assertTrue(origin.startswith("capture …") and origin.endswith("a-long-folder-name/node/sys"), origin)

    def test_rows_agree_with_the_other_commands(self):
        root = sys_root("constructed/mi300x-8gpu-faults")
        header, rows = gpu_rows(run("--sysfs-root", root).stdout)
        health = json.loads(run("health", "--json", "--sysfs-root", root, expect=1).stdout)
        metrics = json.loads(run("metric", "--json", "--sysfs-root", root).stdout)
        static = json.loads(run("static", "--json", "--sysfs-root", root).stdout)
        self.assertEqual(len(rows), 8)
        # 4 checks not run: the capture's GPU 0 has no ECC, firmware or compute answer, and no CPER ring (errors.recent).
        self.assertEqual(cells_of(header, rows[0])["HEALTH"], "PASS 4?")
        for row, verdict, sampled, facts in zip(rows, health["devices"], metrics["devices"], static["devices"]):
            cells = cells_of(header, row)
            # A verdict with checks that did not run says how many (GPU 0's RAS block is unreadable).
            unchecked = f" {len(verdict['not_checked'])}?" if verdict["not_checked"] else ""
            self.assertEqual(cells["HEALTH"], verdict["overall"] + unchecked, row)
            m = sampled["metrics"]
            self.assertEqual(cells["TEMP"], f"{m['temperature_junction']['value']:.0f}°C", row)
            cap = facts["metrics"]["power_cap"]["value"]
            self.assertEqual(cells["POWER/CAP"], f"{m['power_current']['value']:.0f}/{cap:.0f} W", row)
            used, total = m["vram_used"]["value"], facts["metrics"]["vram_total"]["value"]
            self.assertEqual(cells["VRAM USED/TOTAL"], f"{used / 2**30:.1f}/{total / 2**30:.1f} GiB {100 * used / total:.0f}%")
            self.assertEqual(cells["BUSY"], f"{m['gpu_busy']['value']:.0f}%")
            self.assertEqual(cells["SCLK/MCLK"], f"{m['clock_sclk']['value']:.0f}/{m['clock_mclk']['value']:.0f}")
            self.assertEqual(cells["MODE"], "SPX/NPS1")
        doc = json.loads(run("--json", "--sysfs-root", root).stdout)
        self.assertEqual(doc["command"], "overview")
        self.assertEqual([d["health"] for d in doc["devices"]], [d["overall"] for d in health["devices"]])
        self.assertEqual(doc["devices"][0]["vram_total_bytes"], 206141652992)
        self.assertEqual({p["pid"] for p in doc["processes"]}, {60011, 48213, 48214, 52890, 51007})

    def test_selection_and_rocm_smi_alone(self):
        root = sys_root("constructed/mi300x-8gpu-spx-nps1")
        _, rows = gpu_rows(run("--sysfs-root", root, "-g", "2,5").stdout)
        self.assertEqual([r.split()[0] for r in rows], ["2", "5"])
        _, ours = gpu_rows(run("--sysfs-root", root).stdout)
        _, compat = gpu_rows(run("--rocm-smi", "--sysfs-root", root).stdout)
        self.assertEqual(compat, ours)
        _, one = gpu_rows(run("--rocm-smi", "-d", "3", "--sysfs-root", root).stdout)
        self.assertEqual([r.split()[0] for r in one], ["3"])

    def test_no_gpus_is_an_error_with_the_reason(self):
        proc = run("--sysfs-root", sys_root("real/lact/hd7870"), expect=3)
        self.assertIn("no GPUs found", proc.stderr)

    def test_colour_only_on_a_terminal_and_never_with_no_color(self):
        import pty
        root = sys_root("constructed/mi300x-8gpu-faults")

        def on_tty(env):
            main, sub = pty.openpty()
            proc = subprocess.Popen([SMI, "--sysfs-root", root], stdout=sub, stderr=subprocess.DEVNULL, env=env)
            os.close(sub)
            data = b""
            while True:
                try:
                    chunk = os.read(main, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                data += chunk
            os.close(main)
            self.assertEqual(proc.wait(timeout=60), 0)
            return data.decode()

        env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        coloured = on_tty(env)
        self.assertRegex(coloured, "\x1b\\[1;31mFAIL 1\\?\x1b\\[0m")  # FAIL, with errors.recent not run (no CPER ring)
        self.assertNotIn("\x1b", on_tty(dict(env, NO_COLOR="1")))


class Query(unittest.TestCase):
    """query -m FIELDS and --nvidia-smi --query-gpu: one row per GPU for scripts (issue 15)."""
    DONE_WHEN = ("index,name,memory.used,memory.total,temperature.gpu,power.draw,utilization.gpu")

    def test_partitions_one_row_each(self):
        root = sys_root("constructed/mi300x-8gpu-cpx-nps1")
        known = json.loads(run("partition", "--json", "--sysfs-root", root).stdout)["devices"]
        fields = "index,partition_index,partition_id,partition_bdf,partition_memory,partition_compute_units,temperature_junction"
        doc = json.loads(run("query", "--partitions", "--json", "-m", fields, "--sysfs-root", root).stdout)
        rows = doc["partitions"]
        self.assertEqual(len(rows), 64)
        gpu_temps = {d["index"]: d["metrics"]["temperature_junction"]["value"]
                     for d in json.loads(run("metric", "--json", "-m", "temperature_junction", "--sysfs-root",
                                             root).stdout)["devices"]}
        for row in rows:
            p = known[row["index"]]["partition_list"][row["partition_index"]]
            self.assertEqual((row["partition_id"], row["partition_bdf"]), (p["id"], p["bdf"]))
            self.assertEqual(row["partition_memory"]["value"], p["metrics"]["partition_memory"]["value"])
            self.assertEqual(row["partition_compute_units"]["value"], p["metrics"]["partition_compute_units"]["value"])
            self.assertEqual(row["temperature_junction"]["value"], gpu_temps[row["index"]])  # the GPU's own
        target = known[3]["partition_list"][5]
        out = run("query", "--partitions", "-g", target["id"], "-m", "index,partition_index,partition_bdf", "--csv",
                  "--no-header", "--sysfs-root", root).stdout
        self.assertEqual(out, f"3,5,{target['bdf']}\n")
        proc = run("query", "-m", "index,partition_id", "--sysfs-root", root, expect=2)
        self.assertIn("partition_id is a partition's field: add --partitions", proc.stderr)

    def test_partitions_of_mig_instances(self):
        assert_fake_nvml(self)
        env = dict(os.environ, HIPSTACK_NVML_LIBRARY=os.environ["FAKE_NVML_FULL"],
                   HIPSTACK_FAKE_NVML_SCRIPT=f"{os.environ['FAKE_NVML_SCRIPTS_DIR']}/h100x2-mig.txt")
        empty = tempfile.mkdtemp(prefix="no-amd-")
        self.addCleanup(os.rmdir, empty)
        known = json.loads(subprocess.run([SMI, "partition", "--json", "--sysfs-root", empty], capture_output=True,
                                          env=env, check=True, timeout=60).stdout)["devices"]
        proc = subprocess.run([SMI, "query", "--partitions", "--csv", "--no-header", "-m", "index,partition_id",
                               "--sysfs-root", empty], capture_output=True, text=True, env=env, check=True, timeout=60)
        expected = "".join(f"{d['index']},{p['id']}\n" for d in known for p in d["partition_list"])
        self.assertEqual(proc.stdout, expected)
        self.assertIn("MIG-", expected)

    def test_query_mixes_identity_static_and_live(self):
        root = sys_root("constructed/mi300x-8gpu-spx-nps1")
        out = run("query", "-m", "index,name,vram_used,vram_total,power_current", "--csv", "--no-header", "--no-units",
                  "--sysfs-root", root).stdout
        rows = list(csv.reader(io.StringIO(out)))
        self.assertEqual(len(rows), 8)
        doc = json.loads(run("metric", "--json", "--sysfs-root", root).stdout)
        total = json.loads(run("static", "--json", "-m", "vram_total", "--sysfs-root", root).stdout)
        for row, live, facts in zip(rows, doc["devices"], total["devices"]):
            self.assertEqual(row[0], str(live["index"]))
            self.assertEqual(row[1], "AMD Instinct MI300X")
            self.assertEqual(int(row[2]), live["metrics"]["vram_used"]["value"])
            self.assertEqual(int(row[3]), facts["metrics"]["vram_total"]["value"])
            self.assertEqual(float(row[4]), live["metrics"]["power_current"]["value"])
        header = run("query", "-m", "index,vram_used,power", "--csv", "--sysfs-root", root).stdout.splitlines()[0]
        self.assertTrue(header.startswith("index,vram_used [B],power_average [W],power_current [W]"), header)
        table = run("query", "-m", "index,vram_total", "--sysfs-root", root).stdout.splitlines()
        self.assertEqual(table[1].split(None, 1)[1].strip(), "192.0 GiB")
        run("query", "--sysfs-root", root, expect=2)  # no fields
        proc = run("query", "-m", "indx", "--sysfs-root", root, expect=2)
        self.assertIn("Did you mean index?", proc.stderr)

    def test_nvidia_smi_query_on_every_capture(self):
        for name in ("constructed/mi300x-8gpu-spx-nps1", "constructed/mi300x-8gpu-cpx-nps1",
                     "constructed/mi300x-8gpu-faults"):
            with self.subTest(capture=name):
                root = sys_root(name)
                out = run("--nvidia-smi", f"--query-gpu={self.DONE_WHEN}", "--format=csv,noheader,nounits",
                          "--sysfs-root", root).stdout
                lines = out.splitlines()
                self.assertEqual(len(lines), 8)
                doc = json.loads(run("metric", "--json", "--sysfs-root", root).stdout)
                for line, device in zip(lines, doc["devices"]):
                    fields = line.split(", ")
                    self.assertEqual(len(fields), 7, line)
                    m = device["metrics"]
                    self.assertEqual(fields[0], str(device["index"]))
                    self.assertEqual(fields[2], str(-(-m["vram_used"]["value"] // 2**20)))
                    self.assertEqual(fields[4], f"{m['temperature_junction']['value']:.0f}")
                    self.assertEqual(fields[5], f"{m['power_current']['value']:.2f}")
                    self.assertEqual(fields[6], f"{m['gpu_busy']['value']:.0f}")

    def test_nvidia_smi_header_units_and_selection(self):
        root = sys_root("constructed/mi300x-8gpu-faults")
        out = run("--nvidia-smi", "--query-gpu", "index,pci.bus_id,memory.used,power.limit,fan.speed",
                  "--format=csv", "-i", "1,6", "--sysfs-root", root).stdout.splitlines()
        self.assertEqual(out[0], "index, pci.bus_id, memory.used [MiB], power.limit [W], fan.speed [%]")
        self.assertEqual(len(out), 3)
        self.assertTrue(out[1].startswith("1, 00000000:27:00.0, "), out[1])
        self.assertTrue(out[1].endswith(" MiB, 750.00 W, [N/A]"), out[1])
        self.assertTrue(out[2].startswith("6, 00000000:C7:00.0, "), out[2])
        # What nvidia-smi itself refuses is refused in its words (test_nvidia_smi_compat.py); what
        # it takes but hipstack does not answer is named on stderr.
        for bad in (["--format=csv"], ["--query-gpu=index", "-pm", "1"], ["dmon", "-c", "1", "-x"]):
            with self.subTest(args=bad):
                proc = run("--nvidia-smi", *bad, "--sysfs-root", root, expect=2)
                self.assertIn("hipstack-smi --nvidia-smi:", proc.stderr)
        self.assertIn("Did you mean temperature.gpu?",
                      run("--nvidia-smi", "--query-gpu=temprature.gpu", "--format=csv", expect=2).stderr)

    def test_nvidia_smi_against_nvml(self):
        """The scripted NVML (fake_nvml) as the source: the NVIDIA GPU's fields are NVML's values."""
        assert_fake_nvml(self)
        env = dict(os.environ, HIPSTACK_NVML_LIBRARY=os.environ["FAKE_NVML_FULL"],
                   HIPSTACK_FAKE_NVML_SCRIPT=f"{os.environ['FAKE_NVML_SCRIPTS_DIR']}/h100x2-mig.txt")
        root = sys_root("real/lact/rx6900xt")
        proc = subprocess.run([SMI, "--nvidia-smi", "--query-gpu=index,name,uuid,pci.bus_id,memory.total,memory.used,"
                               "power.draw,clocks.sm,pstate,mig.mode.current", "--format=csv,noheader,nounits",
                               "--sysfs-root", root], capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertEqual(len(lines), 3)
        doc = json.loads(subprocess.run([SMI, "metric", "--json", "-g", "1", "--sysfs-root", root], capture_output=True,
                                        text=True, env=env, timeout=60, check=True).stdout)
        facts = json.loads(subprocess.run([SMI, "static", "--json", "-g", "1", "--sysfs-root", root], capture_output=True,
                                          text=True, env=env, timeout=60, check=True).stdout)
        device, m, s = doc["devices"][0], doc["devices"][0]["metrics"], facts["devices"][0]["metrics"]
        fields = lines[1].split(", ")
        self.assertEqual(fields[0], "1")
        self.assertEqual(fields[1], device["name"])
        self.assertEqual(fields[2], device["uuid"])
        self.assertEqual(fields[3].lower(), "0000" + device["bdf"])
        self.assertEqual(fields[4], str(-(-s["vram_total"]["value"] // 2**20)))
        self.assertEqual(fields[5], str(-(-m["vram_used"]["value"] // 2**20)))
        self.assertEqual(fields[6], f"{m['power_average']['value']:.2f}")
        self.assertEqual(fields[7], f"{m['clock_sm']['value']:.0f}")
        self.assertEqual(fields[8], m["performance_state"]["value"])
        self.assertEqual(fields[9], "Enabled" if s["mig_mode"]["value"] == "enabled" else "Disabled")


class TopologyMatrix(unittest.TestCase):
    """topology prints the matrix of `nvidia-smi topo -m` with a legend; --list and JSON keep the pairs."""

    def matrix(self, root, *extra, env=None):
        proc = subprocess.run([SMI, "topology", "--sysfs-root", root, *extra], capture_output=True, text=True,
                              timeout=60, env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        header = lines[0].split()
        rows = {}
        for line in lines[1:]:
            if not line.strip():
                break
            cells = line.split()
            rows[cells[0]] = dict(zip(header, cells[1:]))
        return header, rows, proc.stdout

    def test_xgmi_node(self):
        root = sys_root("constructed/mi300x-8gpu-spx-nps1")
        header, rows, out = self.matrix(root)
        gpus = [f"GPU{i}" for i in range(8)]
        self.assertEqual(header, gpus + ["NUMA", "CPU", "AFFINITY"])  # "CPU AFFINITY": one column
        pairs = json.loads(run("topology", "--json", "--sysfs-root", root).stdout)["links"]
        for link in pairs:
            cell = rows[f"GPU{link['from']}"][f"GPU{link['to']}"]
            self.assertEqual(cell, "XGMI" if link["metrics"]["link_type"]["value"] == "xgmi" else cell)
        for g in gpus:
            self.assertEqual(rows[g][g], "X")
        numa = json.loads(run("static", "--json", "-m", "numa_node", "--sysfs-root", root).stdout)["devices"]
        for d in numa:
            self.assertEqual(rows[f"GPU{d['index']}"]["NUMA"], str(d["metrics"]["numa_node"]["value"]))
        # CPU affinity is the kernel's local_cpulist of each GPU's PCI device, in the matrix and in JSON.
        listed = {d["index"]: d["bdf"] for d in json.loads(run("list", "--json", "--sysfs-root", root).stdout)["devices"]}
        cards = {}
        for card in os.listdir(os.path.join(root, "class/drm")):
            uevent = os.path.join(root, "class/drm", card, "device/uevent")
            if os.path.exists(os.path.join(root, "class/drm", card, "device/local_cpulist")) and os.path.exists(uevent):
                slot = [l.split("=", 1)[1] for l in open(uevent).read().splitlines() if l.startswith("PCI_SLOT_NAME=")]
                if slot:
                    cards[slot[0]] = open(os.path.join(root, "class/drm", card, "device/local_cpulist")).read().strip()
        gpus_json = json.loads(run("topology", "--json", "--sysfs-root", root).stdout)["gpus"]
        self.assertEqual(len(gpus_json), 8)
        for g in gpus_json:
            expected = cards[listed[g["index"]]]
            self.assertEqual(g["metrics"]["cpu_affinity"]["value"], expected)
            self.assertEqual(rows[f"GPU{g['index']}"]["CPU"], expected)
        self.assertEqual(len({c for c in cards.values()}), 2)  # two sockets' halves
        self.assertIn("  XGMI  a direct XGMI link", out)
        self.assertNotIn("PXB", out)  # the legend names only what the matrix shows
        for line in out.splitlines():
            self.assertLessEqual(len(line), 80, line)
        pair_list = run("topology", "--list", "--sysfs-root", root).stdout
        self.assertTrue(pair_list.startswith("FROM  TO  TYPE"), pair_list)
        self.assertEqual(len(pair_list.splitlines()), 1 + 8 * 7)

    def test_cpu_affinity_malformed_is_an_error(self):
        base = tempfile.mkdtemp(prefix="smi-cpus-")
        self.addCleanup(shutil.rmtree, base, True)
        root = os.path.join(base, "sys")
        shutil.copytree(sys_root("real/lact/rx6900xt"), root, symlinks=True)
        path = os.path.join(root, "class/drm/card0/device/local_cpulist")
        os.unlink(path)
        with open(path, "w") as f:
            f.write("0-15\x1b[31m\n")
        metrics = json.loads(run("static", "--json", "-m", "cpu_affinity", "--sysfs-root", root).stdout)["devices"][0]["metrics"]
        self.assertEqual(metrics["cpu_affinity"]["status"], "error")
        self.assertIn("local_cpulist: not a CPU list", metrics["cpu_affinity"]["detail"])
        _, rows, _ = self.matrix(root)
        self.assertEqual(rows["GPU0"]["CPU"], "N/A")

    def test_pcie_and_nvlink_codes(self):
        assert_fake_nvml(self)
        env = dict(os.environ, HIPSTACK_NVML_LIBRARY=os.environ["FAKE_NVML_FULL"],
                   HIPSTACK_FAKE_NVML_SCRIPT=f"{os.environ['FAKE_NVML_SCRIPTS_DIR']}/h100x2-mig.txt")
        root = sys_root("real/lact/rx6900xt")
        _, rows, out = self.matrix(root, env=env)
        pairs = json.loads(subprocess.run([SMI, "topology", "--json", "--sysfs-root", root], capture_output=True,
                                          text=True, env=env, timeout=60, check=True).stdout)["links"]
        codes = {"board": "BRD", "switch": "PIX", "switches": "PXB", "host_bridge": "PHB", "numa_node": "NODE",
                 "system": "SYS"}
        self.assertTrue(pairs)
        for link in pairs:
            m = link["metrics"]
            nvlinks = m.get("link_nvlink_count", {}).get("value", 0)
            expected = f"NV{nvlinks}" if nvlinks else codes[m["link_pcie_path"]["value"]]
            self.assertEqual(rows[f"GPU{link['from']}"][f"GPU{link['to']}"], expected, link)


class HumanUnits(unittest.TestCase):
    """Tables read as people read them (docs/cli.md "Units"); JSON and CSV keep exact values."""
    CAPTURES_SEEN = ("constructed/mi300x-8gpu-spx-nps1", "constructed/mi300x-8gpu-cpx-nps1",
                     "constructed/mi300x-8gpu-faults", "real/lact/rx6600")

    def test_no_table_prints_raw_bytes(self):
        raw = re.compile(r"\b\d{7,}(\.\d+)? ?B(/s)?\b")
        for name in self.CAPTURES_SEEN:
            for command in (["list"], ["static"], ["metric"], ["ras"], ["partition"], ["topology"], ["process"],
                            ["bad-pages"], ["monitor", "-i", "1"], []):
                with self.subTest(capture=name, command=command):
                    proc = subprocess.run([SMI, "--sysfs-root", sys_root(name), *command], capture_output=True,
                                          text=True, timeout=60)
                    self.assertNotIn(proc.returncode, (2, -6, -11), proc.stderr)
                    self.assertIsNone(raw.search(proc.stdout), proc.stdout)

    def table_value(self, out, metric):
        for line in out.splitlines():
            fields = line.split(None, 1)
            if fields and fields[0] == metric:
                return fields[1].strip()
        self.fail(f"{metric} not in the table:\n{out}")

    def test_values_match_the_exact_json(self):
        root = sys_root("constructed/mi300x-8gpu-spx-nps1")
        doc = json.loads(run("--sysfs-root", root, "metric", "-g", "0", "--json").stdout)
        metrics = doc["devices"][0]["metrics"]
        table = run("--sysfs-root", root, "metric", "-g", "0").stdout
        used = metrics["vram_used"]["value"]
        self.assertEqual(metrics["vram_used"]["unit"], "B")
        # Each value first; its limit or total follows (HumanTables).
        self.assertTrue(self.table_value(table, "vram_used").startswith(f"{used / 2**20:.1f} MiB / "))
        self.assertTrue(self.table_value(table, "temperature_junction").startswith(
            f"{metrics['temperature_junction']['value']:g} °C (crit "))
        self.assertTrue(self.table_value(table, "pcie_width").startswith(f"x{metrics['pcie_width']['value']} (max x"))
        energy = metrics["energy_consumed"]["value"]
        self.assertEqual(self.table_value(table, "energy_consumed"), f"{energy / 1e6:.1f} MJ")
        static = run("--sysfs-root", root, "static", "-g", "0").stdout
        total = json.loads(run("--sysfs-root", root, "static", "-g", "0", "--json").stdout)["devices"][0]["metrics"]
        self.assertEqual(self.table_value(static, "vram_total"), f"{total['vram_total']['value'] / 2**30:.1f} GiB")

    def test_machine_outputs_keep_exact_bytes(self):
        root = sys_root("constructed/mi300x-8gpu-spx-nps1")
        rows = list(csv.DictReader(io.StringIO(run("--sysfs-root", root, "metric", "-g", "0", "--csv").stdout)))
        used = next(r for r in rows if r["metric"] == "vram_used")
        self.assertEqual(used["unit"], "B")
        self.assertRegex(used["value"], r"^\d{7,}$")

    def test_every_long_csv_says_what_json_says(self):
        """metric, partition, topology and process CSV rows (one reading each, made in one place) carry
        each reading's status, raw value and unit exactly as the JSON of the same command does."""
        base = os.path.join(CAPTURES, "constructed/mi300x-8gpu-cpx-nps1")
        args = ("--sysfs-root", os.path.join(base, "sys"), "--procfs-root", os.path.join(base, "proc"))

        def readings_of(doc, command):
            """(key cells..., metric, instance) -> reading JSON, from each command's JSON shape."""
            out = {}
            def add(key, metrics):
                for name, r in metrics.items():
                    for instance, one in (r["instances"].items() if "instances" in r else [("", r)]):
                        out[key + (name, instance)] = dict(one, unit=r.get("unit", ""))  # an instanced metric's unit is its own
            if command == "topology":
                for link in doc["links"]:
                    add((str(link["from"]), str(link["to"])), link["metrics"])
            for d in doc.get("devices", []):
                if command == "metric":
                    add((str(d["index"]), d["bdf"]), d["metrics"])
                for p in d.get("partition_list", []):
                    add((str(d["index"]), d["bdf"], str(p["index"]), p["id"]), p["metrics"])
                for p in d.get("processes", []):
                    add((str(d["index"]), d["bdf"], str(p["pid"]), p["name"], p["user"], p["command_line"]), p["metrics"])
            return out

        for command, keys, instance in (("metric", ["device", "bdf"], True),
                                        ("partition", ["device", "bdf", "partition", "id"], False),
                                        ("topology", ["from", "to"], False),
                                        ("process", ["device", "bdf", "pid", "name", "user", "command_line"], True)):
            with self.subTest(command=command):
                want = readings_of(json.loads(run(command, "--json", *args).stdout), command)
                rows = list(csv.DictReader(io.StringIO(run(command, "--csv", *args).stdout)))
                self.assertEqual(list(rows[0].keys()), keys + ["metric"] + (["instance"] if instance else []) + ["status", "value", "unit"])
                got = {}
                for row in rows:
                    got[tuple(row[k] for k in keys) + (row["metric"], row.get("instance", ""))] = row
                self.assertEqual(set(got), set(want))
                for key, row in got.items():
                    r = want[key]
                    self.assertEqual(row["status"], r["status"], key)
                    if r["status"] != "ok":
                        self.assertEqual(row["value"], "", key)
                        continue
                    value = r["value"]
                    if isinstance(value, str):
                        self.assertEqual(row["value"], value, key)
                    else:  # the same number (CSV writes 35 for JSON's 35.0)
                        self.assertEqual(float(row["value"]), value, key)
                    self.assertEqual(row["unit"], r["unit"], key)


class HumanTables(unittest.TestCase):
    """Item 2: tables say values as the vendor and people read them; JSON keeps the raw ones."""

    def rows(self, *args, env=None):
        """METRIC -> VALUE of the table of one GPU."""
        proc = subprocess.run([SMI, *args], capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        # The heading's UUID goes on a line of its own where it does not fit 80 columns.
        start = next(i for i, line in enumerate(lines) if line.startswith("METRIC"))
        self.assertLessEqual(start, 2, lines[:3])
        rows, name = {}, None
        for line in lines[start + 1:]:
            if line.startswith(" "):  # a value wrapped to 80 columns goes on under its column
                rows[name] += " " + line.strip()
            elif line.strip():
                name, value = re.match(r"(\S+)\s+(.*)$", line).groups()
                rows[name] = value
        return rows

    def test_firmware_in_rocm_smi_form_absent_blocks_left_out(self):
        root = sys_root("constructed/mi300x-8gpu-spx-nps1")
        raw = json.loads(run("static", "--json", "-g", "0", "-m", "firmware_version", "--sysfs-root", root).stdout)
        raw = {k: v["value"] for k, v in raw["devices"][0]["metrics"]["firmware_version"]["instances"].items()}
        self.assertEqual(raw["smc"], "0x00555b00")  # JSON unchanged
        rows = self.rows("static", "-g", "0", "-m", "firmware_version", "--sysfs-root", root)
        self.assertEqual(rows["firmware_version[smc]"], "00.85.91.00")  # rocm-smi: the four bytes in decimal
        self.assertEqual(rows["firmware_version[ta_xgmi]"], "32.00.01.19")
        self.assertEqual(rows["firmware_version[sos]"], "0x0036024b")  # rocm-smi: hex
        self.assertEqual(rows["firmware_version[vcn]"], "0x0611300c")
        self.assertEqual(rows["firmware_version[mec]"], str(int(raw["mec"], 16)))  # rocm-smi: decimal
        absent = sorted(k for k, v in raw.items() if int(v, 16) == 0)
        self.assertTrue(absent)
        for block in absent:
            self.assertNotIn(f"firmware_version[{block}]", rows)
        every = self.rows("static", "-g", "0", "-m", "firmware_version", "--show-unsupported", "--sysfs-root", root)
        self.assertIn("ce", absent)
        self.assertEqual(every["firmware_version[ce]"], "0")
        self.assertEqual(every["firmware_version[asd]"], "0x00000000")

    def test_live_values_beside_their_limits(self):
        root = sys_root("constructed/mi300x-8gpu-spx-nps1")
        limits = json.loads(run("static", "--json", "-g", "0", "--sysfs-root", root).stdout)["devices"][0]["metrics"]
        rows = self.rows("metric", "-g", "0", "--sysfs-root", root)
        crit = limits["temperature_junction_critical"]["value"]
        self.assertRegex(rows["temperature_junction"], rf"^\d+ °C \(crit {crit:g} °C\)$")
        self.assertRegex(rows["power_current"], rf"^\d+ W \(cap {limits['power_cap']['value']:g} W\)$")
        self.assertRegex(rows["clock_sclk"], r"^\d+ MHz \(max 2100 MHz\)$")
        self.assertRegex(rows["vram_used"], r"^[\d.]+ MiB / 192\.0 GiB \(\d+ %\)$")
        only = self.rows("metric", "-g", "0", "-m", "temperature_junction", "--sysfs-root", root)
        self.assertEqual(list(only), ["temperature_junction"])  # the limit is beside it, not a row of its own

    def test_violation_residency_as_a_share_of_its_window(self):
        root = sys_root("constructed/mi300x-8gpu-faults")
        rows = self.rows("metric", "-g", "6", "-m", "violation_residency", "--sysfs-root", root)
        self.assertEqual(rows["violation_residency[socket_thermal]"], "2764938 (40.0 % of the time)")  # of 6912346
        self.assertEqual(rows["violation_residency[ppt]"], "0 (0.0 % of the time)")

    def test_throttle_bits_named(self):
        assert_fake_nvml(self)
        env = dict(os.environ, HIPSTACK_NVML_LIBRARY=os.environ["FAKE_NVML_FULL"],
                   HIPSTACK_FAKE_NVML_SCRIPT=f"{os.environ['FAKE_NVML_SCRIPTS_DIR']}/h100x2-mig.txt")
        empty = tempfile.mkdtemp(prefix="no-amd-")  # a sysfs root without AMD GPUs: only the fake's
        self.addCleanup(os.rmdir, empty)
        first = self.rows("metric", "-g", "0", "-m", "throttle_status", "--sysfs-root", empty, env=env)
        self.assertEqual(first["throttle_status"], "0x4: sw_power_cap")
        second = self.rows("metric", "-g", "1", "-m", "throttle_status", "--sysfs-root", empty, env=env)
        self.assertEqual(second["throttle_status"], "0x0: none")

    def test_mi300_throttle_bits_named_and_zero_not_called_none(self):
        # An MI300X (gfx942) whose driver writes gpu_metrics v1.4: a 288-byte table, throttle_status at 40.
        base = tempfile.mkdtemp(prefix="smi-throttle-")
        self.addCleanup(shutil.rmtree, base, True)
        root = os.path.join(base, "sys")
        shutil.copytree(sys_root("constructed/mi300x-8gpu-spx-nps1"), root, symlinks=True)
        path = os.path.join(root, "class/drm/card0/device/gpu_metrics")
        for bits, shown in ((0x4, "0x4: socket_thermal"), (0x11, "0x11: prochot, hbm_thermal"),
                            (0x0, "0x0: no bit set")):
            table = bytearray(288)
            table[0:4] = struct.pack("<HBB", 288, 1, 4)
            table[40:44] = struct.pack("<I", bits)
            os.unlink(path)
            with open(path, "wb") as f:
                f.write(table)
            rows = self.rows("metric", "-g", "0", "-m", "throttle_status,gpu_metrics_version", "--sysfs-root", root)
            self.assertEqual(rows["gpu_metrics_version"], "1.4")
            self.assertEqual(rows["throttle_status"], shown)
        # Other ASICs' bits differ and are not documented: a set bit is not guessed at, 0 is still 0.
        other = self.rows("metric", "-m", "throttle_status", "--sysfs-root", sys_root("real/lact/rx7600s"))
        self.assertEqual(other["throttle_status"], "0x2 (this GPU's throttle bits are not documented: not decoded)")
        idle = self.rows("metric", "-m", "throttle_status", "--sysfs-root", sys_root("real/lact/rx6900xt"))
        self.assertEqual(idle["throttle_status"], "0x0: no bit set")


if __name__ == "__main__":
    SMI, CAPTURES = configure(sys.argv[1], sys.argv[2])
    unittest.main(argv=[sys.argv[0], "-v"])
