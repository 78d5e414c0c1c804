#!/usr/bin/env python3
"""hipstack-smi end to end on bundled captures: output forms, schema, selection and exit codes.

Usage: test_cli.py HIPSTACK_SMI CAPTURES_DIR
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from smi_cli import assert_fake_nvml, configure, fake_nvml_env, run, sys_root

SMI = None
CAPTURES = None


class ExitCodes(unittest.TestCase):
    def test_bad_arguments_exit_2(self):
        run("metric", "--no-such-flag", expect=2)
        run("no-such-command", expect=2)
        run("metric", "-m", "no_such_metric", "--sysfs-root", sys_root("real/lact/rx6900xt"), expect=2)
        run("monitor", "-w", "-1", expect=2)
        run("list", "--json", "--csv", expect=2)

    def test_missing_root_is_bad_arguments(self):
        proc = run("list", "--sysfs-root", "/nonexistent/sys", expect=2)
        self.assertIn("/nonexistent/sys", proc.stderr)

    def test_no_such_device_exit_3(self):
        root = sys_root("real/lact/rx6900xt")
        for selector in ("5", "ff:00.0", "GPU-00000000-0000-0000-0000-000000000000"):
            proc = run("metric", "-g", selector, "--sysfs-root", root, expect=3)
            self.assertIn(selector, proc.stderr)

    def test_version_and_help(self):
        self.assertIn("hipstack-smi", run("version").stdout)
        self.assertIn("metric", run("--help").stdout)
        # --version: the same version as the subcommand's first line, and no subcommand needed.
        flag = run("--version").stdout.strip()
        self.assertRegex(flag, r"^hipstack-smi \d+\.\d+\.\d+$")
        self.assertEqual(flag, run("version").stdout.splitlines()[0].strip())

    def test_version_probes_nothing_unless_verbose(self):
        # version reads nothing (issue 44: a command at the spawn floor): no NVML loaded, no backend
        # named; -v probes them and says which is present, with the fake NVML's two GPUs found.
        env = dict(fake_nvml_env(self, "h100x2-mig.txt"), LD_DEBUG="files")
        plain = subprocess.run([SMI, "version", "--json"], capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(plain.returncode, 0, plain.stderr)
        self.assertNotIn("dynamically loaded", plain.stderr)
        self.assertNotIn("libnvidia-ml", plain.stderr)
        doc = json.loads(plain.stdout)
        self.assertNotIn("backends", doc)
        verbose = subprocess.run([SMI, "version", "-v", "--json"], capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(verbose.returncode, 0, verbose.stderr)
        self.assertIn("dynamically loaded", verbose.stderr)
        backends = {b["name"]: b for b in json.loads(verbose.stdout)["backends"]}
        self.assertEqual(doc["version"], json.loads(verbose.stdout)["version"])
        self.assertTrue(backends["nvml"]["present"], backends)
        self.assertIn("amdgpu", backends)
        text = subprocess.run([SMI, "version", "-v"], capture_output=True, text=True, env=fake_nvml_env(self, "h100x2-mig.txt"),
                              timeout=60)
        self.assertIn("backend nvml: present", text.stdout)
        self.assertEqual(text.stderr.count("backend nvml"), 0, "the backends are printed once, on stdout")


class JsonSchema(unittest.TestCase):
    def check_metrics(self, metrics):
        for name, entry in metrics.items():
            if "instances" in entry:
                for inst in entry["instances"].values():
                    self.assertIn(inst["status"], ("ok", "not_supported", "unavailable", "error"))
            else:
                self.assertIn(entry["status"], ("ok", "not_supported", "unavailable", "error"), name)
                if entry["status"] == "ok":
                    self.assertIn("value", entry, name)

    def test_metric_json(self):
        doc = json.loads(run("metric", "--json", "--sysfs-root", sys_root("real/lact/rx6900xt")).stdout)
        self.assertEqual(doc["schema"], "hipstack-smi/v1")
        self.assertEqual(doc["command"], "metric")
        (dev,) = doc["devices"]
        self.assertEqual(dev["bdf"], "0000:0c:00.0")
        self.assertEqual(dev["vendor"], "amd")
        self.assertEqual(dev["metrics"]["temperature_edge"], {"status": "ok", "value": 56.0, "unit": "C"})
        self.assertEqual(dev["metrics"]["temperature_hbm"]["status"], "not_supported")
        self.check_metrics(dev["metrics"])

    def test_static_json_has_levels_and_partitions(self):
        doc = json.loads(run("static", "--json", "--sysfs-root", sys_root("real/k8s-device-plugin/topo-mi300-cpx")).stdout)
        self.assertEqual(len(doc["devices"]), 8)
        first = doc["devices"][0]
        self.assertEqual(len(first["partition_list"]), 8)
        self.assertEqual(first["metrics"]["gfx_target"]["value"], "gfx942")
        doc = json.loads(run("static", "--json", "--sysfs-root", sys_root("real/lact/rx6900xt")).stdout)
        levels = doc["devices"][0]["metrics"]["mclk_level"]
        self.assertEqual(levels["unit"], "MHz")
        self.assertEqual([v["value"] for v in levels["instances"].values()], [96.0, 456.0, 673.0, 1000.0])

    def test_every_command_emits_json(self):
        root = sys_root("constructed/mi300x-8gpu-spx-nps1")
        for command in ("list", "static", "metric", "process", "topology", "version"):
            doc = json.loads(run(command, "--json", "--sysfs-root", root).stdout)
            self.assertEqual(doc["command"], command)
        lines = run("monitor", "-i", "2", "-w", "0.01", "--json", "--sysfs-root", root).stdout.splitlines()
        self.assertEqual(len(lines), 2)
        for line in lines:
            self.assertEqual(len(json.loads(line)["devices"]), 8)


class Selection(unittest.TestCase):
    def test_by_index_bdf_uuid(self):
        root = sys_root("constructed/mi300x-8gpu-spx-nps1")
        devices = json.loads(run("list", "--json", "--sysfs-root", root).stdout)["devices"]
        self.assertEqual(len(devices), 8)
        target = devices[3]
        for selector in ("3", target["bdf"], target["bdf"][5:], target["uuid"], target["uuid"].lower()):
            doc = json.loads(run("list", "--json", "-g", selector, "--sysfs-root", root).stdout)
            self.assertEqual([d["index"] for d in doc["devices"]], [3], selector)
        doc = json.loads(run("list", "--json", "-g", "1,5", "-g", "1", "--sysfs-root", root).stdout)
        self.assertEqual([d["index"] for d in doc["devices"]], [1, 5])

    def test_partitions_and_every_uuid_form_select_their_gpu(self):
        root = sys_root("constructed/mi300x-8gpu-cpx-nps1")
        devices = json.loads(run("partition", "--json", "--sysfs-root", root).stdout)["devices"]
        for device in (devices[0], devices[6]):
            for p in device["partition_list"][1:4]:
                for selector in (p["bdf"], p["bdf"][5:], p["id"], p["id"].lower()):
                    doc = json.loads(run("list", "--json", "-g", selector, "--sysfs-root", root).stdout)
                    self.assertEqual([d["index"] for d in doc["devices"]], [device["index"]], selector)
        # hipstack-info prints rocminfo's form, GPU-<unique id>: each agent's names its GPU.
        info = os.path.join(os.path.dirname(SMI), "hipstack-info")
        agents = json.loads(subprocess.run([info, "--json", "--sysfs-root", root], capture_output=True, text=True,
                                           timeout=60).stdout)["agents"]
        gpus = [a for a in agents if a["uuid"]]
        self.assertEqual(len(gpus), 64)
        by_bdf = {d["bdf"]: d["index"] for d in json.loads(run("list", "--json", "--sysfs-root", root).stdout)["devices"]}
        for agent in gpus[::9]:
            doc = json.loads(run("list", "--json", "-g", agent["uuid"], "--sysfs-root", root).stdout)
            self.assertEqual(doc["devices"][0]["bdf"][:10], agent["bdf"][:10], agent["uuid"])
            self.assertIn(doc["devices"][0]["bdf"], by_bdf)
        proc = run("list", "-g", "GPU-0000000000000000", "--sysfs-root", root, expect=3)
        self.assertIn("index, BDF or UUID of a GPU or of a partition", proc.stderr)

    def test_metric_filter(self):
        doc = json.loads(run("metric", "--json", "-m", "power_average,clock_sclk", "--sysfs-root",
                             sys_root("real/lact/rx6900xt")).stdout)
        self.assertEqual(sorted(doc["devices"][0]["metrics"]), ["clock_sclk", "power_average"])

    def test_converted_values_print_as_the_shortest_decimal(self):
        # rx580 power1_average holds 41045000 µW: the JSON must say 41.045, not 41.044999999999995
        # (nlohmann json prints the shortest text that reads back, so the double itself must be exact).
        out = run("metric", "--json", "-m", "power_average", "--sysfs-root", sys_root("real/lact/rx580")).stdout
        self.assertIn('"value":41.045,', out.replace(" ", ""))
        self.assertEqual(json.loads(out)["devices"][0]["metrics"]["power_average"]["value"], 41.045)


class Guidance(unittest.TestCase):
    """A mistyped command, option or metric is named with the closest known ones (issue 15)."""

    def test_mistyped_command(self):
        for typo, meant in (("metirc", "metric"), ("lst", "list"), ("helth", "health"), ("topolgy", "topology")):
            with self.subTest(typo=typo):
                proc = run(typo, expect=2)
                self.assertIn(f'unknown command "{typo}". Did you mean {meant}?', proc.stderr)
        proc = run("-g", "0", "frobnicate", expect=2)  # after an option with its value; nothing close
        self.assertIn('unknown command "frobnicate". Commands: list, static, metric', proc.stderr)
        self.assertNotIn("Did you mean", proc.stderr)

    def test_mistyped_option(self):
        self.assertIn("unknown option --jsn. Did you mean --json?", run("--jsn", "list", expect=2).stderr)
        self.assertIn("unknown option --pcie-bx. Did you mean --pcie-bw?", run("metric", "--pcie-bx", expect=2).stderr)
        self.assertIn("unknown option --iteratons. Did you mean --iterations?", run("monitor", "--iteratons=2", expect=2).stderr)

    def test_other_tools_spellings_name_the_hipstack_command(self):
        """nvidia-smi, rocm-smi and amd-smi habits get one line naming what does it here, exit 2."""
        for args, named in ((["-L"], "hipstack-smi list"), (["-q"], "hipstack-smi static and hipstack-smi metric"),
                            (["--query-gpu=name,uuid", "--format=csv"], "hipstack-smi --nvidia-smi --query-gpu=FIELDS"),
                            (["-i", "0", "metric"], "hipstack-smi -g N"), (["dmon"], "hipstack-smi monitor"),
                            (["pmon", "-c", "1"], "hipstack-smi process -w SECONDS"),
                            (["monitor", "-d", "2"], "hipstack-smi monitor -w SECONDS"),
                            (["--showtemp"], "hipstack-smi --rocm-smi --showtemp"), (["xgmi"], "hipstack-smi topology"),
                            (["firmware"], "hipstack-smi static -m firmware_version")):
            with self.subTest(args=args):
                proc = run(*args, expect=2)
                self.assertIn(named, proc.stderr)
                self.assertEqual(proc.stderr.count("\n"), 1, proc.stderr)
        # hipstack-smi's own -i (process, monitor, event: iterations) is no habit: the real mistake is named.
        proc = run("process", "-i", "3", "--bogus", expect=2)
        self.assertIn("unknown option --bogus", proc.stderr)
        self.assertNotIn("-g N", proc.stderr)
        # A word in an argument's place is not a command habit.
        proc = run("capture", "firmware", "--bogus", expect=2)
        self.assertNotIn("amd-smi", proc.stderr)

    def test_mistyped_metric(self):
        root = sys_root("real/lact/rx6900xt")
        proc = run("metric", "-m", "temperatur_edge", "--sysfs-root", root, expect=2)
        self.assertIn('unknown metric or group "temperatur_edge". Did you mean temperature_edge?', proc.stderr)
        # A beginning lists the general names first.
        proc = run("metric", "-m", "gpu_busy,temp", "--sysfs-root", root, expect=2)
        self.assertIn('unknown metric or group "temp". Did you mean temperature, temperature_hbm, temperature_edge,', proc.stderr)
        self.assertIn("hipstack-smi catalogue", proc.stderr)

    def test_every_help_ends_with_examples_that_work(self):
        root = sys_root("constructed/mi300x-8gpu-spx-nps1")
        commands = ["list", "static", "metric", "process", "query", "topology", "monitor", "event", "health", "ras",
                    "bad-pages", "partition", "set", "reset", "catalogue", "capture", "version"]
        top = run("--help").stdout
        self.assertIn("Examples:", top)
        for command in [None] + commands:
            with self.subTest(command=command):
                text = run("--help").stdout if command is None else run(command, "--help").stdout
                examples = text[text.index("Examples:"):].splitlines()[1:]
                self.assertGreaterEqual(len(examples), 2, text)
                for line in examples:
                    words = line.split("(")[0].split()
                    self.assertIn("hipstack-smi", words, line)
                    words = words[words.index("hipstack-smi") + 1:]
                    # Run those that end by themselves and write nothing: on the capture, as a user would.
                    # (A dry run may be refused on the capture, exit 4 or 5; an example must never be bad arguments.)
                    if (command in ("monitor", "event", "capture") or ">" in words or "--host" in words
                            or "--config" in words or (line.lstrip().startswith("sudo") and "--dry-run" not in words)):
                        continue
                    proc = subprocess.run([SMI, *words, "--sysfs-root", root], capture_output=True, text=True, timeout=60)
                    self.assertGreaterEqual(proc.returncode, 0, f"{line}: {proc.stderr}")
                    self.assertNotEqual(proc.returncode, 2, f"{line}: {proc.stderr}")

    def test_metric_groups(self):
        root = sys_root("constructed/mi300x-8gpu-spx-nps1")
        groups = {g["name"]: g["metrics"] for g in json.loads(run("catalogue", "--json").stdout)["groups"]}
        self.assertIn("temperature_junction_critical", groups["temperature"])
        for command in ("metric", "static"):
            with self.subTest(command=command):
                shown = json.loads(run(command, "-g", "0", "-m", "temperature", "--json", "--sysfs-root", root).stdout)
                names = set(shown["devices"][0]["metrics"])
                self.assertTrue(names, command)
                self.assertTrue(names <= set(groups["temperature"]), names)
        live = set(json.loads(run("metric", "-g", "0", "-m", "temperature", "--json", "--sysfs-root", root).stdout)
                   ["devices"][0]["metrics"])
        self.assertIn("temperature_junction", live)
        # A group and a metric together, a name given twice: each metric once.
        both = run("metric", "-g", "0", "-m", "power,gpu_busy,power_current", "--csv", "--sysfs-root", root).stdout
        names = [row["metric"] for row in csv.DictReader(io.StringIO(both))]
        self.assertEqual(sorted(names), sorted(set(names)))
        self.assertIn("gpu_busy", names)
        self.assertIn("power_current", names)
        proc = run("metric", "-m", "temprature", "--sysfs-root", root, expect=2)
        self.assertIn('unknown metric or group "temprature". Did you mean temperature?', proc.stderr)

    def test_all_gpus_on_every_command(self):
        root = sys_root("constructed/mi300x-8gpu-faults")
        for command in ("list", "static", "metric", "health", "ras", "bad-pages", "partition", "process"):
            with self.subTest(command=command):
                every = subprocess.run([SMI, command, "--json", "--sysfs-root", root], capture_output=True, text=True, timeout=60)
                chosen = subprocess.run([SMI, command, "--json", "-g", "all", "--sysfs-root", root], capture_output=True,
                                        text=True, timeout=60)
                self.assertEqual(chosen.returncode, every.returncode, chosen.stderr)
                self.assertEqual(len(json.loads(chosen.stdout)["devices"]), 8)
                self.assertEqual([d["index"] for d in json.loads(chosen.stdout)["devices"]],
                                 [d["index"] for d in json.loads(every.stdout)["devices"]])
        links = json.loads(run("topology", "--json", "-g", "all", "--sysfs-root", root).stdout)["links"]
        self.assertEqual(links, json.loads(run("topology", "--json", "--sysfs-root", root).stdout)["links"])

    def test_output_that_cannot_be_written_fails(self):
        root = sys_root("constructed/mi300x-8gpu-spx-nps1")
        for args in (("metric", "--json"), ("list",), ("catalogue",)):
            with self.subTest(args=args), open("/dev/full", "w") as full:
                proc = subprocess.run([SMI, *args, "--sysfs-root", root], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
                self.assertEqual(proc.returncode, 1, proc.stderr)
                self.assertIn("cannot write the output: No space left on device", proc.stderr)


class EveryCommandAnswers(unittest.TestCase):
    """A command says what it has, or why it has nothing (issue 39, item 3)."""

    def test_a_metric_of_any_kind_is_read_by_metric_and_static(self):
        root = sys_root("constructed/mi300x-8gpu-spx-nps1")
        table = run("metric", "-m", "vram_total", "-g", "0", "--sysfs-root", root).stdout
        self.assertIn("vram_total", table)
        self.assertIn("192.0 GiB", table)
        doc = json.loads(run("static", "-m", "power_current", "-g", "0", "--json", "--sysfs-root", root).stdout)
        self.assertEqual(list(doc["devices"][0]["metrics"]), ["power_current"])
        self.assertEqual(doc["devices"][0]["metrics"]["power_current"]["status"], "ok")
        csv_text = run("static", "-m", "gpu_busy", "-g", "0", "--csv", "--sysfs-root", root).stdout
        self.assertIn(",gpu_busy,,ok,", csv_text)

    def test_ras_without_ras_says_why(self):
        out = run("ras", "-g", "0", "--sysfs-root", sys_root("constructed/mi300x-8gpu-spx-nps1")).stdout
        self.assertIn("RAS not available: ", out)
        self.assertNotIn("METRIC", out)

    def test_event_says_what_it_watches_before_it_waits(self):
        root = sys_root("constructed/mi300x-8gpu-spx-nps1")
        proc = run("event", "-i", "1", "-g", "2,3", "--sysfs-root", root)
        self.assertTrue(proc.stderr.startswith("Watching GPU 2,3 every 1 s for throttling"), proc.stderr)
        # One sentence, wrapped to 80 columns, its continuation lines indented.
        lines = proc.stderr.splitlines()
        self.assertTrue(all(len(line) <= 80 for line in lines) and all(line.startswith("  ") for line in lines[1:]), lines)
        self.assertTrue(" ".join(line.strip() for line in lines).endswith("one line per change, Ctrl-C stops."), lines)
        for form in ("--json", "--csv"):
            with self.subTest(form=form):
                self.assertEqual(run("event", "-i", "1", form, "--sysfs-root", root).stderr, "")


class Csv(unittest.TestCase):
    def test_metric_csv_parses(self):
        out = run("metric", "--csv", "--sysfs-root", sys_root("real/lact/rx7900xtx")).stdout
        rows = list(csv.DictReader(io.StringIO(out)))
        self.assertEqual(list(rows[0]), ["device", "bdf", "metric", "instance", "status", "value", "unit"])
        power = [r for r in rows if r["metric"] == "power_average"]
        self.assertEqual(power[0]["value"], "68")
        self.assertEqual(power[0]["unit"], "W")

    def test_list_csv(self):
        out = run("list", "--csv", "--sysfs-root", sys_root("constructed/mi300x-8gpu-cpx-nps1")).stdout
        rows = list(csv.DictReader(io.StringIO(out)))
        self.assertEqual(len(rows), 8)
        self.assertEqual({r["partitions"] for r in rows}, {"8"})


class Tables(unittest.TestCase):
    def test_aligned_human_table(self):
        out = run("list", "--sysfs-root", sys_root("constructed/mi300x-8gpu-spx-nps1")).stdout.splitlines()
        self.assertTrue(out[0].startswith("GPU"))
        uuid_column = out[0].index("UUID")
        for line in out[1:]:
            self.assertTrue(line[uuid_column:].startswith("GPU-"), line)

    def test_no_gpus_is_exit_3_with_each_backends_reason(self):
        empty = sys_root("real/lact/hd7870")  # a card the amdgpu driver does not drive
        for command in ("list", "static", "metric", "process", "topology", "monitor", "health", "ras", "bad-pages",
                        "partition"):
            with self.subTest(command=command):
                proc = run(command, "--sysfs-root", empty, expect=3)
                self.assertEqual(proc.stdout, "")
                self.assertIn("hipstack-smi: no GPUs found:\n  amdgpu: no card bound to amdgpu", proc.stderr)
                self.assertIn("\n  nvml: ", proc.stderr)
        with tempfile.TemporaryDirectory() as wrong:  # a --sysfs-root that is no sys folder
            proc = run("metric", "--sysfs-root", wrong, expect=3)
            self.assertIn(f"  amdgpu: no DRM cards under {wrong}/class/drm", proc.stderr)
        proc = run("query", "-m", "index", "--sysfs-root", empty, expect=3)
        self.assertIn("no GPUs found", proc.stderr)
        self.assertIn("hipstack-smi", run("version", "--sysfs-root", empty).stdout)
        proc = run("list", "-v", "--sysfs-root", empty, expect=3)
        self.assertIn("backend amdgpu: absent", proc.stderr)


class RocmSmiCompat(unittest.TestCase):
    def test_json_keys_and_values_as_rocm_smi_prints_them(self):
        root = sys_root("real/lact/rx6900xt")
        doc = json.loads(run("--rocm-smi", "--showtemp", "--showclocks", "--showmeminfo", "vram", "--showbus",
                             "--showuniqueid", "--json", "--sysfs-root", root).stdout)
        card = doc["card0"]
        self.assertEqual(card["Temperature (Sensor edge) (C)"], "56.0")
        self.assertEqual(card["Temperature (Sensor HBM 0) (C)"], "N/A")
        self.assertEqual(card["sclk clock speed:"], "(500Mhz)")
        self.assertEqual(card["mclk clock level:"], "3")
        self.assertEqual(card["VRAM Total Memory (B)"], "17163091968")
        self.assertEqual(card["PCI Bus"], "0000:0C:00.0")
        self.assertEqual(card["Unique ID"], "0x946d7e1ef9b172dd")

    def test_text_mode_and_device_selection(self):
        root = sys_root("constructed/mi300x-8gpu-spx-nps1")
        out = run("--rocm-smi", "-d", "2", "--showpower", "--sysfs-root", root).stdout
        self.assertIn("ROCm System Management Interface", out)
        self.assertIn("GPU[2]\t\t: Average Graphics Package Power (W): ", out)
        self.assertNotIn("GPU[0]", out)

    def test_all_info_covers_every_section(self):
        doc = json.loads(run("--rocm-smi", "-a", "--json", "--sysfs-root", sys_root("real/lact/vega56")).stdout)
        for key in ("GPU ID", "VBIOS version", "Performance Level", "GPU use (%)", "Voltage (mV)",
                    "GTT Total Used Memory (B)", "Card series", "Max Graphics Package Power (W)"):
            self.assertIn(key, doc["card0"])
        self.assertIn("Driver version", doc["system"])

    def test_every_key_as_rocm_smi_5_2_3_printed_it(self):
        """Every key both print, against what rocm-smi 5.2.3 itself printed (-a --json) on each recorded
        capture (tests/differential): the library's rocm-smi table (smi-lib/src/foreign/rocm_smi.cpp)
        reads each key from the metric rocm-smi reads. The differences are hipstack's on purpose, each
        named here with why."""
        def on_purpose(key, theirs, ours):
            if key == "sclk clock speed:":  # hipstack's current clock (gpu_metrics), rocm-smi's the starred pp_dpm line's
                return True
            if key in ("Card model", "Card series") and theirs == "0x1002":  # rocm-smi found no name: printed the vendor id
                return True
            return theirs == "N/A" and ours != "N/A"  # hipstack reads a value rocm-smi did not (Phoenix's junction)
        recorded = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../differential/rocm-smi-5.2.3")
        compared = differing = 0
        for name in sorted(os.listdir(recorded)):
            capture = "real/lact/" + name[:-len(".json")]
            if not name.endswith(".json") or not os.path.isdir(sys_root(capture)):
                continue
            with open(os.path.join(recorded, name)) as f:
                theirs = {card: keys for card, keys in json.load(f).items() if card.startswith("card")}
            ours = json.loads(run("--rocm-smi", "-a", "--json", "--sysfs-root", sys_root(capture)).stdout)
            for card, keys in theirs.items():
                for key, value in keys.items():
                    if key not in ours.get(card, {}):
                        continue
                    compared += 1
                    if ours[card][key] != value:
                        differing += 1
                        with self.subTest(capture=capture, key=key):
                            self.assertTrue(on_purpose(key, value, ours[card][key]), f"rocm-smi {value!r}, ours {ours[card][key]!r}")
        self.assertGreaterEqual(compared, 300)
        self.assertLess(differing, compared // 20)

    def test_fan_as_rocm_smi_5_2_3_printed_it(self):
        # What rocm-smi 5.2.3 itself printed (-a --json) on each capture (tests/differential): the fan
        # keys must be exactly those, including none where it could not detect a fan speed.
        recorded = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../differential/rocm-smi-5.2.3")
        compared = 0
        for name in sorted(os.listdir(recorded)):
            capture = "real/lact/" + name[:-len(".json")]
            if not name.endswith(".json") or not os.path.isdir(sys_root(capture)):
                continue
            with open(os.path.join(recorded, name)) as f:
                theirs = {card: {k: v for k, v in keys.items() if k.startswith("Fan")}
                          for card, keys in json.load(f).items() if card.startswith("card")}
            ours = json.loads(run("--rocm-smi", "-f", "--json", "--sysfs-root", sys_root(capture)).stdout)
            with self.subTest(capture=capture):
                self.assertEqual(ours, theirs)
            compared += 1
        self.assertGreaterEqual(compared, 12)
        # Text: one "Fan Level" line, or rocm-smi's sentence when the level or share is 0.
        out = run("--rocm-smi", "-f", "--sysfs-root", sys_root("real/lact/rx580")).stdout
        self.assertIn("GPU[0]\t\t: Fan Level: 35 (14%)\nGPU[0]\t\t: Fan RPM: 595\n", out)
        out = run("--rocm-smi", "-f", "--sysfs-root", sys_root("real/lact/rx6900xt")).stdout
        self.assertIn("GPU[0]\t\t: Unable to detect fan speed for GPU 0\n", out)
        self.assertNotIn("Fan RPM", out)

    def test_fan_level_is_pwm1_and_its_share_of_pwm1_max(self):
        # A board whose pwm1_max is not 255: the level is pwm1 itself and the share pwm1/pwm1_max,
        # rounded as Python rounds (halves to even: 0.5 % is 0, "Unable to detect").
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(sys_root("real/lact/rx580"), tmp + "/sys", symlinks=True)
            (hwmon,) = [os.path.join(d, "") for d, _, files in os.walk(tmp + "/sys") if "pwm1" in files]

            def fan(pwm, pwm_max):
                for file, value in (("pwm1", pwm), ("pwm1_max", pwm_max)):
                    with open(hwmon + file, "w") as f:
                        f.write(f"{value}\n")
                return json.loads(run("--rocm-smi", "-f", "--json", "--sysfs-root", tmp + "/sys").stdout)["card0"]

            self.assertEqual(fan(50, 200), {"Fan speed (level)": "50", "Fan speed (%)": "25", "Fan RPM": "595"})
            self.assertEqual(fan(3, 200), {"Fan speed (level)": "3", "Fan speed (%)": "2", "Fan RPM": "595"})  # 1.5 -> 2
            self.assertEqual(fan(5, 200), {"Fan speed (level)": "5", "Fan speed (%)": "2", "Fan RPM": "595"})  # 2.5 -> 2
            self.assertEqual(fan(1, 200), {})  # 0.5 -> 0
            self.assertEqual(fan(0, 200), {})
            live = json.loads(run("metric", "--json", "-m", "fan_pwm_level,fan_pwm",
                                  "--sysfs-root", tmp + "/sys").stdout)["devices"][0]["metrics"]
            static = json.loads(run("static", "--json", "--sysfs-root", tmp + "/sys").stdout)["devices"][0]["metrics"]
            self.assertEqual((live["fan_pwm_level"]["value"], static["fan_pwm_level_max"]["value"]), (0, 200))
            fan(50, 200)
            live = json.loads(run("metric", "--json", "-m", "fan_pwm_level,fan_pwm",
                                  "--sysfs-root", tmp + "/sys").stdout)["devices"][0]["metrics"]
            self.assertEqual((live["fan_pwm_level"]["value"], live["fan_pwm"]["value"]), (50, 25))

    def test_unsupported_flags_are_bad_arguments(self):
        proc = run("--rocm-smi", "--setsclk", "3", expect=2)
        self.assertIn("--setsclk", proc.stderr)
        run("--rocm-smi", "--json", expect=2)  # alone, --rocm-smi is the default view (DefaultView)
        run("--rocm-smi", "--showmeminfo", "flash", expect=2)


class Partition(unittest.TestCase):
    def test_cpx_node_modes_and_partitions(self):
        doc = json.loads(run("partition", "--json", "-g", "0", "--sysfs-root",
                             sys_root("constructed/mi300x-8gpu-cpx-nps1")).stdout)
        (device,) = doc["devices"]
        self.assertEqual(device["modes"]["compute_partition"]["value"], "CPX")
        self.assertEqual(device["modes"]["compute_partition_available"]["value"], "SPX, DPX, QPX, CPX")
        self.assertEqual(device["modes"]["memory_partition"]["value"], "NPS1")
        self.assertEqual(len(device["partition_list"]), 8)
        self.assertEqual(device["partition_list"][5]["bdf"], device["bdf"][:-1] + "5")
        self.assertEqual(device["partition_list"][5]["metrics"]["partition_compute_units"]["value"], 38)
        text = run("partition", "-g", "0", "--sysfs-root", sys_root("constructed/mi300x-8gpu-spx-nps1")).stdout
        self.assertIn("compute: SPX (available: SPX, DPX, QPX, CPX)", text)

    def test_a_partition_selector_shows_that_partition(self):
        root = sys_root("constructed/mi300x-8gpu-cpx-nps1")
        every = json.loads(run("partition", "--json", "--sysfs-root", root).stdout)["devices"]
        gpu = every[2]
        third, sixth = gpu["partition_list"][3], gpu["partition_list"][6]

        def shown(*selectors):
            args = [a for s in selectors for a in ("-g", s)]
            devices = json.loads(run("partition", "--json", *args, "--sysfs-root", root).stdout)["devices"]
            return [(d["index"], [p["index"] for p in d["partition_list"]]) for d in devices]

        self.assertEqual(shown(third["id"]), [(gpu["index"], [3])])
        self.assertEqual(shown(third["bdf"][5:], sixth["id"].lower()), [(gpu["index"], [3, 6])])
        self.assertEqual(shown(third["id"], str(gpu["index"])), [(gpu["index"], list(range(8)))])  # the GPU too
        self.assertEqual(shown(gpu["bdf"]), [(gpu["index"], list(range(8)))])  # partition 0's BDF is the GPU's
        text = run("partition", "-g", third["id"], "--sysfs-root", root).stdout
        # The selected partition's row only (its ID cut in the middle to fit 80 columns, its BDF whole).
        self.assertEqual([line.split()[0] for line in text.splitlines() if line[:1].isdigit()], ["3"], text)
        self.assertIn(third["bdf"], text)
        self.assertIn(third["id"][-6:], text)


class Health(unittest.TestCase):
    def test_exit_codes(self):
        run("health", "--sysfs-root", sys_root("real/lact/rx6900xt"), expect=0)
        run("health", "--sysfs-root", sys_root("real/lact/r7-240"), expect=0)  # WARN is healthy
        run("health", "--sysfs-root", sys_root("real/k8s-device-plugin/topo-mi300-cpx"), expect=8)  # UNKNOWN
        run("health", "--config", "/nonexistent.conf", expect=2)

    def test_fault_node_json_names_the_failures(self):
        root = sys_root("constructed/mi300x-8gpu-faults")
        self.assertTrue(os.path.isdir(root), f"the bundled capture {root} is missing")
        proc = run("health", "--json", "--sysfs-root", root, expect=1)
        devices = json.loads(proc.stdout)["devices"]
        self.assertEqual(len(devices), 8)
        failing = {d["bdf"]: sorted(f["check"] for f in d["findings"] if f["verdict"] == "FAIL") for d in devices}
        self.assertIn(["memory.uncorrectable_ecc"], failing.values())
        text = run("health", "-g", devices[1]["bdf"], "--sysfs-root", root, expect=1).stdout
        self.assertIn("What to do:", text)
        rows = list(csv.DictReader(io.StringIO(run("health", "--csv", "--sysfs-root", root, expect=1).stdout)))
        self.assertEqual({r["verdict"] for r in rows} - {"PASS", "WARN", "FAIL", "UNKNOWN"}, set())
        pages = json.loads(run("bad-pages", "--json", "--sysfs-root", root).stdout)["devices"]
        self.assertTrue(any(p["state"] == "pending" for d in pages for p in d["bad_pages"]))
        ras = json.loads(run("ras", "--json", "--sysfs-root", root).stdout)["devices"]
        self.assertIn("umc", ras[1]["metrics"]["ras_uncorrectable"]["instances"])


class BothVendors(unittest.TestCase):
    def setUp(self):
        assert_fake_nvml(self)

    def env(self, script):
        env = dict(os.environ)
        env["HIPSTACK_NVML_LIBRARY"] = os.environ["FAKE_NVML_FULL"]
        env["HIPSTACK_FAKE_NVML_SCRIPT"] = f"{os.environ['FAKE_NVML_SCRIPTS_DIR']}/{script}"
        return env

    def test_amd_and_nvidia_listed_together_and_selectable(self):
        root = sys_root("real/lact/rx6900xt")
        proc = subprocess.run([SMI, "list", "--json", "--sysfs-root", root], capture_output=True, text=True,
                              env=self.env("h100x2-mig.txt"), check=True)
        devices = json.loads(proc.stdout)["devices"]
        self.assertEqual([d["vendor"] for d in devices], ["amd", "nvidia", "nvidia"])
        self.assertEqual(devices[2]["partitions"], 2)
        proc = subprocess.run([SMI, "metric", "--json", "-g", "2a:00.0", "-m", "temperature_junction", "--sysfs-root", root],
                              capture_output=True, text=True, env=self.env("h100x2-mig.txt"), check=True)
        (device,) = json.loads(proc.stdout)["devices"]
        self.assertEqual(device["vendor"], "nvidia")
        self.assertEqual(device["index"], 2)

    def test_verbose_says_why_nvml_is_absent(self):
        proc = subprocess.run([SMI, "list", "-v", "--sysfs-root", sys_root("real/lact/rx6900xt")], capture_output=True,
                              text=True, env=self.env("init-fails.txt"), check=True)
        self.assertIn("backend nvml: absent (nvmlInit failed", proc.stderr)
        self.assertIn("0000:0c:00.0", proc.stdout)


class Changes(unittest.TestCase):
    """Argument and refusal paths of partition/set/reset that need no driver (the emulator test,
    tests/emulator/test_partitions.py, covers the driver's side). The bundled captures are never
    written: every call here is refused or a dry run."""
    def test_bad_change_arguments_exit_2(self):
        root = sys_root("constructed/mi300x-8gpu-spx-nps1")
        proc = run("partition", "--compute-mode", "CPX", "--sysfs-root", root, expect=2)
        self.assertIn("name the GPUs to change with -g", proc.stderr)
        self.assertIn("give at least one of --power-cap", run("set", "-g", "0", "--sysfs-root", root, expect=2).stderr)
        self.assertIn("expected a number of watts", run("set", "-g", "0", "--power-cap", "lots", expect=2).stderr)
        self.assertIn("DOMAIN:MIN-MAX", run("set", "-g", "0", "--clock-range", "sclk500", expect=2).stderr)
        self.assertIn("auto or a percentage", run("set", "-g", "0", "--fan", "fast", expect=2).stderr)
        run("partition", "--dry-run", "--sysfs-root", root, expect=2)
        proc = run("partition", "--compute-mode", "qpx", "-g", "3", "--dry-run", "--json", "--sysfs-root", root)
        (result,) = json.loads(proc.stdout)["results"]
        self.assertEqual((result["outcome"], result["action"]), ("planned", "compute partition SPX -> QPX"))
        self.assertEqual([(w["path"], w["value"], w["done"]) for w in result["writes"]],
                         [("/sys/class/drm/card24/device/current_compute_partition", "QPX", False)])
        rows = list(csv.DictReader(io.StringIO(run("set", "-g", "3", "--power-cap", "600", "--dry-run", "--csv",
                                                   "--sysfs-root", root).stdout)))
        self.assertEqual([(r["device"], r["outcome"], r["action"]) for r in rows], [("3", "planned", "power cap 750 W -> 600 W")])
        self.assertTrue(rows[0]["writes"].endswith("/power1_cap=600000000 (not written)"), rows[0]["writes"])

    def test_driver_that_never_settles_exits_7(self):
        import shutil
        import tempfile
        scratch = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
        with tempfile.TemporaryDirectory(dir=scratch) as out:
            shutil.copytree(f"{CAPTURES}/constructed/mi300x-8gpu-spx-nps1/sys", f"{out}/sys")
            # A plain copy has no driver: the write lands, but no partitions are ever re-created.
            proc = run("partition", "--compute-mode", "dpx", "-g", "2", "--settle-timeout-ms", "200", "--sysfs-root",
                       f"{out}/sys", expect=7)
            self.assertIn("did not show the new partitions within 200 ms", proc.stdout)
            self.assertIn("next step:", proc.stdout)

    def test_nvidia_is_read_only(self):
        assert_fake_nvml(self)
        env = dict(os.environ)
        env["HIPSTACK_NVML_LIBRARY"] = os.environ["FAKE_NVML_FULL"]
        env["HIPSTACK_FAKE_NVML_SCRIPT"] = f"{os.environ['FAKE_NVML_SCRIPTS_DIR']}/h100x2-mig.txt"
        for args in (["set", "--power-cap", "300"], ["partition", "--compute-mode", "CPX"], ["reset"]):
            proc = subprocess.run([SMI, *args, "-g", "2", "--sysfs-root", sys_root("real/lact/rx6900xt")],
                                  capture_output=True, text=True, env=env, timeout=60)
            self.assertEqual(proc.returncode, 4, proc.stdout + proc.stderr)
            self.assertIn("the nvml backend is read-only", proc.stdout)


class Capture(unittest.TestCase):
    def test_capture_reads_back_identically(self):
        import tempfile
        src = f"{CAPTURES}/constructed/mi300x-8gpu-cpx-nps1"
        with tempfile.TemporaryDirectory() as out:
            proc = run("capture", f"{out}/node", "--processes", "--sysfs-root", f"{src}/sys", "--procfs-root", f"{src}/proc")
            self.assertIn("8 amdgpu card(s)", proc.stdout)
            for command in ("static", "metric", "process"):
                original = json.loads(run(command, "--json", "--sysfs-root", f"{src}/sys").stdout)
                copy = json.loads(run(command, "--json", "--sysfs-root", f"{out}/node/sys").stdout)
                self.assertEqual(original, copy, command)
            run("capture", f"{out}/node", "--sysfs-root", f"{src}/sys", expect=2)  # refuses to overwrite


if __name__ == "__main__":
    SMI, CAPTURES = configure(sys.argv[1], sys.argv[2])
    unittest.main(argv=[sys.argv[0], "-v"])
