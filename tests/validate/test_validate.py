#!/usr/bin/env python3
"""hipstack-validate end to end without a GPU: the GPUs come from a capture (--sysfs-root) and the
kernel programs are fake_module.py under each module's name, told by a scenario how to behave. Checks
the levels, the arguments each module gets, the verdicts against thresholds.json, the handling of
crashing, hanging and lying modules, the JSON, the table and the exit codes.

Usage: test_validate.py HIPSTACK_VALIDATE CAPTURES_DIR THRESHOLDS_JSON
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

VALIDATE = CAPTURES = THRESHOLDS = None
FAKE_NVML = os.environ.get("FAKE_NVML_FULL")  # smi-lib/tests/fake_nvml, set by ctest
FAKE_NVML_SCRIPTS = os.environ.get("FAKE_NVML_SCRIPTS_DIR")
MODULES = ("vector_add", "stream", "transfer", "memtest", "gemm", "stress", "p2p")
HERE = os.path.dirname(os.path.abspath(__file__))


class Validate(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="hipstack-validate-test.")
        self.modules = os.path.join(self.dir, "modules")
        os.mkdir(self.modules)
        for name in MODULES:
            os.symlink(os.path.join(HERE, "fake_module.py"), os.path.join(self.modules, name))
        self.calls = os.path.join(self.dir, "calls.jsonl")
        self.scenario = os.path.join(self.dir, "scenario.json")
        self.write_scenario({})

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write_scenario(self, scenario):
        with open(self.scenario, "w") as f:
            json.dump(scenario, f)

    def run_validate(self, *args, expect=0, capture="constructed/mi300x-8gpu-spx-nps1", json_out=True, env=None):
        cmd = [VALIDATE, "--module-dir", self.modules, "--config", THRESHOLDS, "-q"]
        if capture:
            cmd += ["--sysfs-root", f"{CAPTURES}/{capture}/sys"]
        cmd += (["--json"] if json_out else []) + list(args)
        env = dict({k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")},
                   FAKE_SCENARIO=self.scenario, FAKE_CALLS=self.calls, **(env or {}))
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
        if proc.returncode != expect:
            raise AssertionError(f"{cmd}: exit {proc.returncode}, expected {expect}\n{proc.stdout}\n{proc.stderr}")
        return json.loads(proc.stdout) if json_out and proc.stdout.startswith("{") else proc

    def module_calls(self):
        if not os.path.exists(self.calls):
            return []
        with open(self.calls) as f:
            return [json.loads(line) for line in f]

    def find_test(self, report, name, device=0):
        found = [t for t in report["tests"] if t["test"] == name and (t["runtime_index"] == device or t["runtime_index"] is None)]
        self.assertEqual(len(found), 1, f"{name} on {device}: {[t['test'] for t in report['tests']]}")
        return found[0]

    # ---- levels and arguments ----

    def test_level_1_runs_no_module(self):
        report = self.run_validate("-r", "1")
        self.assertEqual(self.module_calls(), [])
        self.assertEqual(report["level"], 1)
        self.assertEqual(len(report["devices"]), 8)
        names = {t["test"] for t in report["tests"]}
        self.assertIn("pcie.link", names)
        self.assertIn("health", names)
        self.assertTrue(any(n.startswith("install.") for n in names), names)
        # Every device is classed by its name from the capture.
        self.assertEqual({d["class"] for d in report["devices"]}, {"AMD Instinct MI300X"})
        self.assertEqual(report["result"], "pass")

    def test_level_2_and_3_run_their_modules_with_the_device_number(self):
        self.run_validate("-r", "2", "-d", "3")
        calls = self.module_calls()
        self.assertEqual([c["module"] for c in calls], ["vector_add", "stream", "transfer", "memtest"])
        for c in calls:
            self.assertEqual(c["args"][-3:], ["--device", "3", "--json"], c)
        self.assertEqual(calls[1]["args"][:2], ["--repeats", "20"])
        os.remove(self.calls)
        self.run_validate("-r", "3", "-d", "0,1")
        calls = self.module_calls()
        per_device = ["vector_add", "stream", "transfer", "memtest", "gemm", "stress"]
        self.assertEqual([c["module"] for c in calls], per_device * 2 + ["p2p"])
        self.assertNotIn("--device", calls[-1]["args"])  # p2p runs over every GPU at once
        self.assertIn("60", calls[5]["args"])             # stress: a minute at level 3

    def test_p2p_sees_only_the_gpus_under_test(self):
        # p2p takes no --device: -d reaches it as HIP_VISIBLE_DEVICES (these are AMD GPUs), and its
        # numbers 0, 1 are mapped back to the runtime's 2 and 5.
        report = self.run_validate("-r", "3", "-d", "5,2", "-t", "p2p")
        (call,) = self.module_calls()
        self.assertEqual(call["env"], {"HIP_VISIBLE_DEVICES": "2,5", "CUDA_VISIBLE_DEVICES": None})
        p2p = self.find_test(report, "p2p")
        self.assertEqual(p2p["module"]["environment"], ["HIP_VISIBLE_DEVICES=2,5"])
        self.assertEqual([f["name"] for f in p2p["figures"]],
                         ["2 -> 5 one way", "2 -> 5 both ways", "5 -> 2 one way", "5 -> 2 both ways"])
        # A visibility list of the user's own: the runtime's numbers count within it.
        os.remove(self.calls)
        self.run_validate("-r", "3", "-d", "2,5", "-t", "p2p", env={"HIP_VISIBLE_DEVICES": "7,6,5,4,3,2,1,0"})
        (call,) = self.module_calls()
        self.assertEqual(call["env"]["HIP_VISIBLE_DEVICES"], "5,2")
        # A module naming a GPU it was not shown is malformed output.
        self.write_scenario({"p2p": {"pairs": [[0, 1], [1, 2]]}})
        report = self.run_validate("-r", "3", "-d", "2,5", "-t", "p2p", expect=1)
        self.assertIn('"dst" in p2p output.pairs[] is device 2, but the module was shown 2 GPU(s)',
                      self.find_test(report, "p2p")["message"])

    def test_tests_option_runs_only_those(self):
        self.run_validate("-r", "2", "-d", "0", "-t", "stream,memtest")
        self.assertEqual([c["module"] for c in self.module_calls()], ["stream", "memtest"])

    # ---- verdicts against the thresholds ----

    def test_figures_are_judged_against_the_class_peaks(self):
        report = self.run_validate("-r", "3", "-d", "0")
        stream = self.find_test(report, "stream")
        copy = next(f for f in stream["figures"] if f["name"] == "copy")
        # MI300X: 70% of 5300 GB/s.
        self.assertAlmostEqual(copy["minimum"], 3710.0)
        self.assertAlmostEqual(copy["reference"], 5300.0)
        self.assertEqual(copy["verdict"], "pass")
        mul = next(f for f in stream["figures"] if f["name"] == "mul")
        self.assertIsNone(mul["minimum"])  # reported, not judged
        transfer = self.find_test(report, "transfer")
        pinned = next(f for f in transfer["figures"] if f["name"] == "pinned h2d")
        self.assertEqual(pinned["verdict"], "pass")
        self.assertGreater(pinned["minimum"], 0)
        gemm = self.find_test(report, "gemm")
        bf16 = next(f for f in gemm["figures"] if f["name"].startswith("bf16"))
        self.assertAlmostEqual(bf16["minimum"], 0.40 * 1307.4)
        self.assertEqual(report["result"], "pass")

    def test_slow_memory_fails_and_names_the_threshold(self):
        self.write_scenario({"stream": {"triad": 2000.0}})
        report = self.run_validate("-r", "2", "-d", "0", expect=1)
        stream = self.find_test(report, "stream")
        self.assertEqual(stream["verdict"], "fail")
        self.assertIn("triad", stream["message"])
        triad = next(f for f in stream["figures"] if f["name"] == "triad")
        self.assertIn("70% of peak memory bandwidth", triad["basis"])
        self.assertEqual(report["result"], "fail")
        table = self.run_validate("-r", "2", "-d", "0", "-t", "stream", expect=1, json_out=False).stdout
        self.assertIn("FAIL", table)
        self.assertIn("triad: 2000 GB/s against 70% of peak memory bandwidth", table)
        self.assertIn("Result: FAIL", table)

    def test_module_own_failure_fails_the_test(self):
        self.write_scenario({"memtest": {"mode": "fail"}})
        report = self.run_validate("-r", "2", "-d", "0", expect=1)
        memtest = self.find_test(report, "memtest")
        self.assertEqual(memtest["verdict"], "fail")
        self.assertIn("exit code 1", memtest["message"])
        random = next(f for f in memtest["figures"] if f["name"] == "random")
        self.assertEqual((random["value"], random["verdict"]), (3, "fail"))
        self.assertIn("ras", memtest["advice"])

    def test_tiled_gemm_warns_instead_of_judging_speed(self):
        self.write_scenario({"gemm": {"backend": "tiled", "bf16": 1.0}})
        report = self.run_validate("-r", "3", "-d", "0", "-t", "gemm")
        gemm = self.find_test(report, "gemm")
        self.assertEqual(gemm["verdict"], "warn")
        self.assertTrue(any("no vendor BLAS" in n for n in gemm["notes"]), gemm["notes"])
        self.assertTrue(all(f["minimum"] is None for f in gemm["figures"]))

    # ---- modules that misbehave ----

    def test_crash_hang_garbage_and_malformed_output_fail_cleanly(self):
        self.write_scenario({"vector_add": {"mode": "crash"}, "stream": {"mode": "hang"},
                             "transfer": {"mode": "garbage"}, "memtest": {"mode": "malformed"}})
        report = self.run_validate("-r", "2", "-d", "0", "--timeout", "2", expect=1)
        self.assertIn("SIGSEGV", self.find_test(report, "vector_add")["message"])
        self.assertIn("timed out after 2 s", self.find_test(report, "stream")["message"])
        self.assertIn("not JSON", self.find_test(report, "transfer")["message"])
        self.assertIn('no "patterns"', self.find_test(report, "memtest")["message"])
        for name in ("vector_add", "stream", "transfer", "memtest"):
            self.assertEqual(self.find_test(report, name)["verdict"], "fail")

    def test_flags_must_be_json_booleans(self):
        # 0 and "false" are not false, and not a pass either: the output is malformed, naming the field.
        self.write_scenario({"transfer": {"verified": 0}, "gemm": {"verified": "false"},
                             "p2p": {"peer_access": "false"}})
        report = self.run_validate("-r", "3", "-d", "0,1", "-t", "transfer,gemm,p2p", expect=1)
        for test, field in (("transfer", '"verified" in transfer output.copies[pinned h2d]'),
                            ("gemm", '"verified" in gemm output.runs[fp32]'),
                            ("p2p", '"peer_access" in p2p output.pairs[0 -> 1]')):
            found = self.find_test(report, test)
            self.assertEqual(found["verdict"], "fail", test)
            self.assertIn(f"the module's output is malformed: {field} is not true or false", found["message"])
        self.write_scenario({"transfer": {"verified": False}})
        report = self.run_validate("-r", "2", "-d", "0", "-t", "transfer", expect=1)
        transfer = self.find_test(report, "transfer")
        self.assertIn("pinned h2d data", [f["name"] for f in transfer["figures"] if f["verdict"] == "fail"])

    def test_number_beyond_a_double_is_not_json(self):
        # nlohmann's parser throws out_of_range, not parse_error, for 1e999 (found by fuzzing).
        self.write_scenario({"vector_add": {"mode": "overflow"}})
        report = self.run_validate("-r", "2", "-d", "0", "-t", "vector_add", expect=1)
        self.assertIn("not JSON", self.find_test(report, "vector_add")["message"])

    def test_missing_module_and_no_gpu(self):
        os.remove(os.path.join(self.modules, "transfer"))
        self.write_scenario({"vector_add": {"mode": "nogpu"}, "p2p": {"mode": "nogpu"}})
        report = self.run_validate("-r", "3", "-d", "0", "-t", "vector_add,transfer,p2p", expect=1)
        self.assertIn("missing", self.find_test(report, "transfer")["message"])
        self.assertIn("--module-dir", self.find_test(report, "transfer")["advice"])
        self.assertIn("no GPU", self.find_test(report, "vector_add")["message"])
        p2p = self.find_test(report, "p2p")
        self.assertEqual(p2p["verdict"], "skip")
        self.assertIn("two or more", p2p["message"])

    def test_stderr_that_is_not_utf8_keeps_the_json_valid(self):
        # A stray 0xff byte, and a long multibyte stderr whose 8 KiB tail would start inside a character.
        long_text = "\u00e9" * 5000 + "\n"  # 10001 bytes in UTF-8: the cut falls on an odd offset
        self.write_scenario({"vector_add": {"stderr_bytes": "\xff\xfe broken\n"},
                             "stream": {"stderr_bytes": long_text.encode().decode("latin-1")}})
        path = os.path.join(self.dir, "report.json")
        report = self.run_validate("-r", "2", "-d", "0", "-t", "vector_add,stream", "--json-file", path)
        self.assertEqual(self.find_test(report, "vector_add")["module"]["stderr_tail"], "\ufffd\ufffd broken\n")
        tail = self.find_test(report, "stream")["module"]["stderr_tail"]
        self.assertNotIn("\ufffd", tail)
        self.assertTrue(tail.endswith("\u00e9\n") and tail.startswith("\u00e9"), tail[:10])
        self.assertEqual(len(tail.encode()), 8191)  # 8 KiB less the half character at the cut
        with open(path, encoding="utf-8") as f:
            self.assertEqual(json.load(f)["tests"], report["tests"])

    def test_modules_get_only_stdin_stdout_and_stderr(self):
        # An inherited descriptor without close-on-exec (as a parent or a vendor library may leave one)
        # must not reach the module either.
        read_end, write_end = os.pipe()
        try:
            cmd = [VALIDATE, "--module-dir", self.modules, "--config", THRESHOLDS, "-q", "--sysfs-root",
                   f"{CAPTURES}/constructed/mi300x-8gpu-spx-nps1/sys", "--json", "-r", "2", "-d", "0",
                   "-t", "vector_add,stream"]
            env = dict(os.environ, FAKE_SCENARIO=self.scenario, FAKE_CALLS=self.calls)
            proc = subprocess.run(cmd, capture_output=True, timeout=120, env=env, pass_fds=(write_end,))
            self.assertEqual(proc.returncode, 0, proc.stderr)
        finally:
            os.close(read_end)
            os.close(write_end)
        calls = self.module_calls()
        self.assertEqual(len(calls), 2)
        for call in calls:
            self.assertEqual([fd for fd, _ in call["fds"]], [0, 1, 2], call["fds"])
            self.assertEqual(call["fds"][0][1], "/dev/null")

    def test_an_ignored_sigchld_does_not_hang_the_run(self):
        # Inherited SIG_IGN makes the kernel reap children itself: waitpid then fails with ECHILD.
        cmd = [VALIDATE, "--module-dir", self.modules, "--config", THRESHOLDS, "-q", "--sysfs-root",
               f"{CAPTURES}/constructed/mi300x-8gpu-spx-nps1/sys", "--json", "-r", "2", "-d", "0",
               "-t", "vector_add", "--timeout", "5"]
        env = dict(os.environ, FAKE_SCENARIO=self.scenario, FAKE_CALLS=self.calls)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env,
                              preexec_fn=lambda: signal.signal(signal.SIGCHLD, signal.SIG_IGN))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.find_test(json.loads(proc.stdout), "vector_add")["verdict"], "pass")

    # ---- stopping hipstack-validate ----

    def start_validate(self, *args):
        """hipstack-validate in the background, with the stop signals at their defaults (a shell may
        start background jobs with SIGINT ignored, which hipstack-validate then leaves ignored)."""
        def defaults():
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, signal.SIG_DFL)
        cmd = [VALIDATE, "--module-dir", self.modules, "--config", THRESHOLDS, "-q", "--sysfs-root",
               f"{CAPTURES}/constructed/mi300x-8gpu-spx-nps1/sys", "--json", *args]
        env = dict(os.environ, FAKE_SCENARIO=self.scenario, FAKE_CALLS=self.calls)
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                preexec_fn=defaults)

    def wait_for_module(self, name, proc):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            calls = [c for c in self.module_calls() if c["module"] == name]
            if calls:
                self.addCleanup(self.kill_quietly, calls[0]["pid"])  # should a test fail and leave it
                return calls[0]["pid"]
            if proc.poll() is not None:
                self.fail(f"hipstack-validate ended before {name} started: {proc.communicate()}")
            time.sleep(0.05)
        self.fail(f"{name} never started")

    def kill_quietly(self, pid):
        try:  # only a fake module of this test: the pid may have been reused since
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if self.modules.encode() in f.read():
                    os.kill(pid, signal.SIGKILL)
        except (FileNotFoundError, ProcessLookupError):
            pass

    @staticmethod
    def alive(pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return False
        return state not in ("Z", "X")  # a zombie has ended: only its parent's wait is missing

    def assert_ends_within(self, pid, seconds):
        deadline = time.monotonic() + seconds
        while self.alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(self.alive(pid), f"module {pid} still runs {seconds} s later")

    def test_a_stop_signal_ends_the_module_writes_the_report_and_exits_by_the_signal(self):
        # SIGTERM: the module ends at once; SIGINT: a module that ignores SIGTERM gets SIGKILL 5 s later.
        for sig, mode in ((signal.SIGTERM, "hang"), (signal.SIGINT, "stubborn")):
            with self.subTest(signal=sig.name):
                if os.path.exists(self.calls):
                    os.remove(self.calls)
                self.write_scenario({"stream": {"mode": mode}})
                proc = self.start_validate("-r", "2", "-d", "0", "-t", "vector_add,stream,transfer")
                pid = self.wait_for_module("stream", proc)
                time.sleep(0.3)  # let the module get to its sleep (and ignore SIGTERM)
                proc.send_signal(sig)
                out, err = proc.communicate(timeout=30)
                self.assertEqual(proc.returncode, -sig, err)  # died of the signal: 128 + sig to a shell
                self.assert_ends_within(pid, 5)
                report = json.loads(out)
                self.assertEqual(report["stopped_by"], sig.name)
                self.assertEqual(self.find_test(report, "vector_add")["verdict"], "pass")
                stream = self.find_test(report, "stream")
                self.assertEqual(stream["verdict"], "fail")
                self.assertIn(f"stopped: hipstack-validate received {sig.name}", stream["message"])
                self.assertNotIn("transfer", [t["test"] for t in report["tests"]])
                self.assertNotIn("transfer", [c["module"] for c in self.module_calls()])

    def test_a_killed_validate_takes_its_module_along(self):
        # SIGKILL cannot be caught: the module's parent-death signal is the backstop.
        self.write_scenario({"stream": {"mode": "stubborn"}})
        proc = self.start_validate("-r", "2", "-d", "0", "-t", "stream")
        pid = self.wait_for_module("stream", proc)
        proc.kill()
        proc.communicate(timeout=30)
        self.assert_ends_within(pid, 5)

    # ---- NVIDIA GPUs, from the fake NVML ----

    def nvidia_env(self, name, reasons="GPU_IDLE"):
        """One fake NVIDIA GPU (the H200 script with its name and throttle reasons changed) beside an
        empty capture, so that it is the only GPU."""
        with open(os.path.join(FAKE_NVML_SCRIPTS, "h200.txt")) as f:
            text = f.read()
        text = re.sub(r"(?m)^0\.name\s*=.*$", f"0.name = {name}", text)
        text = re.sub(r"(?m)^0\.clock_event_reasons\s*=.*$", f"0.clock_event_reasons = {reasons}", text)
        script = os.path.join(self.dir, "nvml.txt")
        with open(script, "w") as f:
            f.write(text)
        os.makedirs(os.path.join(self.dir, "empty", "sys"), exist_ok=True)
        return {"HIPSTACK_NVML_LIBRARY": FAKE_NVML, "HIPSTACK_FAKE_NVML_SCRIPT": script}

    def test_gh200_is_not_an_h200(self):
        self.assertTrue(FAKE_NVML and os.path.exists(FAKE_NVML), f"fake NVML not found: FAKE_NVML_FULL={FAKE_NVML!r}")
        # "H200" is part of "GH200": the GH200 classes come first, and their memory peaks differ.
        for name, device_class, peak in (("NVIDIA GH200 480GB", "NVIDIA GH200 96GB HBM3", 4000.0),
                                         ("NVIDIA GH200 144G HBM3e", "NVIDIA GH200 144GB HBM3e", 4900.0),
                                         ("NVIDIA H200", "NVIDIA H200", 4800.0)):
            with self.subTest(name=name):
                env = self.nvidia_env(name)
                report = self.run_validate("-r", "2", "-t", "stream", "--sysfs-root", f"{self.dir}/empty/sys",
                                           capture=None, env=env, expect=1)  # level 1 fails: no driver here
                (device,) = report["devices"]
                self.assertEqual((device["name"], device["class"]), (name, device_class))
                copy = next(f for f in self.find_test(report, "stream")["figures"] if f["name"] == "copy")
                self.assertEqual(copy["reference"], peak)

    def test_only_slowing_throttle_reasons_warn_and_are_named(self):
        self.assertTrue(FAKE_NVML and os.path.exists(FAKE_NVML), f"fake NVML not found: FAKE_NVML_FULL={FAKE_NVML!r}")
        # Idle and the power cap are normal: alone they do not warn, and they are not named as slowing.
        env = self.nvidia_env("NVIDIA H200", "GPU_IDLE|SW_POWER_CAP")
        report = self.run_validate("-r", "2", "-t", "vector_add", "--sysfs-root", f"{self.dir}/empty/sys",
                                   capture=None, env=env, expect=1)
        test = self.find_test(report, "vector_add")
        self.assertEqual((test["verdict"], test["notes"]), ("pass", []))
        self.assertEqual(test["telemetry"]["throttle"]["reasons"], ["gpu_idle", "sw_power_cap"])
        env = self.nvidia_env("NVIDIA H200", "GPU_IDLE|SW_POWER_CAP|HW_SLOWDOWN|HW_THERMAL_SLOWDOWN")
        report = self.run_validate("-r", "2", "-t", "vector_add", "--sysfs-root", f"{self.dir}/empty/sys",
                                   capture=None, env=env, expect=1)
        test = self.find_test(report, "vector_add")
        self.assertEqual(test["verdict"], "warn")
        samples = test["telemetry"]["samples"]
        self.assertGreaterEqual(samples, 1)
        self.assertEqual(test["notes"], [f"slowed by hw_slowdown, hw_thermal_slowdown in {samples} of {samples} samples"])

    # ---- telemetry and health ----

    def test_telemetry_is_sampled_from_the_gpu(self):
        report = self.run_validate("-r", "2", "-d", "0", "-t", "stream")
        t = self.find_test(report, "stream")["telemetry"]
        self.assertGreaterEqual(t["samples"], 1)
        self.assertIn("power_current", t["metrics"])
        self.assertIn("temperature_junction", t["metrics"])
        self.assertEqual(t["metrics"]["power_current"]["unit"], "W")
        self.assertEqual(t["metrics"]["temperature_junction"]["max"], 35.0)  # the capture's value

    def test_faulty_gpu_fails_level_1_with_advice(self):
        report = self.run_validate("-r", "1", capture="constructed/mi300x-8gpu-faults", expect=1)
        failing = [t for t in report["tests"] if t["test"] == "health" and t["verdict"] == "fail"]
        self.assertTrue(failing, [t for t in report["tests"] if t["test"] == "health"])
        self.assertTrue(all(t["advice"] for t in failing))

    def test_link_and_health_verdicts_are_the_health_engines(self):
        # captures/constructed/mi300x-8gpu-faults/README.md: GPU 5 trained x8 of x16 (health WARN),
        # GPU 0 has a RAS block that cannot be read (UNKNOWN), GPU 1 uncorrectable ECC (FAIL).
        report = self.run_validate("-r", "1", capture="constructed/mi300x-8gpu-faults", expect=1)

        def on_gpu(name, gpu):
            (found,) = [t for t in report["tests"] if t["test"] == name and t["device"] == gpu]
            return found
        link = on_gpu("pcie.link", 5)
        self.assertEqual(link["verdict"], "warn", link)  # as `hipstack-smi health` says, not fail
        self.assertIn("narrower", link["message"])
        gpu0 = on_gpu("health", 0)
        self.assertEqual(gpu0["verdict"], "pass")
        self.assertRegex(gpu0["message"], r"\d+ not checked: .*ras\.unreadable")  # named, never "none warns"
        self.assertNotIn("every check passed", gpu0["message"])
        self.assertEqual(on_gpu("health", 1)["verdict"], "fail")

    def test_gpu_with_nothing_to_check_is_not_passed(self):
        # Install checks pass, but no test of any GPU ran to a verdict: the run is UNKNOWN (exit 8,
        # as `hipstack-smi health`), never PASS.
        report = self.run_validate("-r", "1", capture="real/k8s-device-plugin/topo-mi300-cpx", expect=8)
        health = [t for t in report["tests"] if t["test"] == "health"]
        self.assertTrue(health)
        for t in health:
            self.assertEqual(t["verdict"], "skip", t)
            self.assertIn("no check could be evaluated", t["message"])
        self.assertTrue([t for t in report["tests"] if t["verdict"] == "pass"], report["tests"])
        self.assertEqual(report["result"], "unknown")
        self.assertEqual(report["unjudged_gpus"], sorted({t["device"] for t in health}))
        table = self.run_validate("-r", "1", capture="real/k8s-device-plugin/topo-mi300-cpx", expect=8, json_out=False)
        self.assertRegex(table.stdout, r"\nResult: UNKNOWN \(\d+ pass, 0 warn, 0 fail, \d+ skip\)\nNo test could judge GPU 0")
        # One GPU judged is not enough for the others: the partial recording of a 7-node host.
        report = self.run_validate("-r", "1", capture="real/partial/rocprofiler-sdk-topology/mixed-7node", expect=8)
        self.assertEqual(report["result"], "unknown")
        # A run where every selected GPU was judged keeps its verdict.
        self.assertEqual(self.run_validate("-r", "1")["unjudged_gpus"], [])

    # ---- arguments and configuration ----

    def test_bad_arguments_and_config(self):
        self.run_validate("-r", "5", expect=2, json_out=False)
        proc = self.run_validate("-t", "nosuch", expect=2, json_out=False)
        self.assertIn("no module 'nosuch'", proc.stderr)
        proc = self.run_validate("-d", "42", expect=3, json_out=False)
        self.assertIn("42", proc.stderr)
        bad = os.path.join(self.dir, "bad.json")
        for text, message in (("{", "not valid JSON"),
                              ('{"version": 1, "classes": [{"class": "x", "expect": {"memory_bandwith": 0.5}}]}',
                               "classes[0].expect.memory_bandwith: unknown key"),
                              ('{"version": 1, "classes": [{"class": "x", "expect": {"transfer": 7}}]}',
                               "at most 1")):
            with open(bad, "w") as f:
                f.write(text)
            proc = subprocess.run([VALIDATE, "--config", bad, "-r", "1"], capture_output=True, text=True, timeout=30)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn(bad, proc.stderr)
            self.assertIn(message, proc.stderr)

    def test_json_file_holds_the_report_beside_the_table(self):
        path = os.path.join(self.dir, "report.json")
        table = self.run_validate("-r", "2", "-d", "0", "-t", "stream", "--json-file", path, json_out=False).stdout
        self.assertIn("Result: PASS", table)
        with open(path) as f:
            report = json.load(f)
        self.assertEqual(report["result"], "pass")
        self.assertEqual(self.find_test(report, "stream")["verdict"], "pass")
        self.run_validate("-r", "1", "--json-file", "/nonexistent/dir/report.json", expect=2, json_out=False)
        # A link planted at the report's path is refused, its target untouched (root runs this).
        target = os.path.join(self.dir, "victim")
        with open(target, "w") as f:
            f.write("untouched\n")
        link = os.path.join(self.dir, "planted.json")
        os.symlink(target, link)
        proc = self.run_validate("-r", "1", "--json-file", link, expect=2, json_out=False)
        self.assertIn("cannot write", proc.stderr)
        with open(target) as f:
            self.assertEqual(f.read(), "untouched\n")

    def test_output_that_cannot_be_written_exits_2(self):
        self.assertTrue(os.path.exists("/dev/full"), "no /dev/full: this test needs a full device to write to")
        # A full disk must not pass for a report written; the --json-file copy is still written.
        path = os.path.join(self.dir, "report.json")
        for args in (["--json"], ["--json-file", path], ["--list"]):
            with self.subTest(args=args), open("/dev/full", "w") as full:
                cmd = [VALIDATE, "--module-dir", self.modules, "--config", THRESHOLDS, "-q", "--sysfs-root",
                       f"{CAPTURES}/constructed/mi300x-8gpu-spx-nps1/sys", "-r", "2", "-d", "0", "-t", "stream", *args]
                env = dict(os.environ, FAKE_SCENARIO=self.scenario, FAKE_CALLS=self.calls)
                proc = subprocess.run(cmd, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120, env=env)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn("cannot write to standard output: No space left on device", proc.stderr)
        with open(path) as f:
            self.assertEqual(self.find_test(json.load(f), "stream")["verdict"], "pass")

    def test_list_shows_every_module_and_level(self):
        out = self.run_validate("--list", json_out=False).stdout
        for name in MODULES:
            self.assertIn(name, out)
        self.assertIn("-r 4: memtest --fraction 0.9 --passes 4", out)


if __name__ == "__main__":
    VALIDATE, CAPTURES, THRESHOLDS = sys.argv[1:4]
    unittest.main(argv=sys.argv[:1] + sys.argv[4:], verbosity=2)
