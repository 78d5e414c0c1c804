#!/usr/bin/env python3
"""Acting on health: `hipstack-smi health --npd` (Node Problem Detector's custom-plugin contract),
the shipped NPD configuration, the Slurm health check (hipstack-slurm-health) against a fake
`scontrol` that records what it is asked, and `static --nfd` (Node Feature Discovery labels).

Usage: test_health_acting.py HIPSTACK_SMI CAPTURES_DIR NPD_CONFIG SLURM_SCRIPT
"""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

from smi_cli import fake_nvml_env

SMI = CAPTURES = NPD_CONFIG = SLURM = None
HEALTHY = "constructed/mi300x-8gpu-spx-nps1"
FAULTS = "constructed/mi300x-8gpu-faults"


def npd(sysfs):
    r = subprocess.run([SMI, "--sysfs-root", sysfs, "health", "--npd"], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


def unchecked_capture(test):
    """A Phoenix capture with every file the checks read removed: nothing can be evaluated."""
    work = tempfile.mkdtemp(prefix="health-npd-")
    test.addCleanup(shutil.rmtree, work, True)
    sysfs = os.path.join(work, "sys")
    shutil.copytree(os.path.join(CAPTURES, "real/lact/phoenix/sys"), sysfs, symlinks=True)
    drm = os.path.join(sysfs, "class/drm")
    card = [c for c in os.listdir(drm) if c.startswith("card") and "-" not in c][0]
    device = os.path.realpath(os.path.join(drm, card, "device"))
    for name in os.listdir(device):
        if name in ("hwmon", "gpu_metrics", "gpu_busy_percent") or name.startswith(("pp_dpm_", "current_link_", "max_link_",
                                                                                    "mem_info_", "power_dpm_")):
            path = os.path.join(device, name)
            shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
    return sysfs


class NpdModeTest(unittest.TestCase):
    def test_healthy_failing_and_unchecked(self):
        rc, out, err = npd(os.path.join(CAPTURES, HEALTHY, "sys"))
        self.assertEqual((rc, out, err), (0, "hipstack: 8 GPUs healthy\n", ""))
        # Failing GPUs come first, each with its failing checks: NPD sets the condition with this line.
        rc, out, err = npd(os.path.join(CAPTURES, FAULTS, "sys"))
        self.assertEqual(rc, 1, err)
        self.assertEqual(out, "hipstack: GPU1 0000:27:00.0 memory.uncorrectable_ecc; GPU4 0000:85:00.0 "
                              "memory.bad_page_threshold\n")
        # Nothing evaluated is Unknown (2), never healthy.
        rc, out, err = npd(unchecked_capture(self))
        self.assertEqual((rc, out), (2, "hipstack: GPU0 0000:64:00.0 not checked\n"), err)

    def test_config(self):
        with open(NPD_CONFIG) as f:
            config = json.load(f)
        self.assertEqual(config["plugin"], "custom")
        rule, = config["rules"]
        self.assertEqual((rule["type"], rule["condition"], rule["args"]), ("permanent", "GPUProblem", ["health", "--npd"]))
        self.assertEqual([c["type"] for c in config["conditions"]], ["GPUProblem"])
        self.assertTrue(os.path.isabs(rule["path"]) and rule["path"].endswith("/bin/hipstack-smi"), rule["path"])
        # The line for two failing GPUs fits what NPD keeps of it.
        self.assertGreaterEqual(config["pluginConfig"]["max_output_length"], 200)


class SlurmTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="slurm-health-")
        self.addCleanup(shutil.rmtree, self.work, True)
        bin_dir = os.path.join(self.work, "bin")
        os.mkdir(bin_dir)
        self.calls = os.path.join(self.work, "calls")
        self.shown = os.path.join(self.work, "shown")
        # scontrol: `show node N -o` prints the state file; `update ...` is recorded, one line per call.
        fake = os.path.join(bin_dir, "scontrol")
        with open(fake, "w") as f:
            f.write('#!/bin/bash\nif [ "$1" = show ]; then cat "%s"; else printf "%%s\\n" "$*" >> "%s"; fi\n'
                    % (self.shown, self.calls))
        os.chmod(fake, stat.S_IRWXU)
        self.env = dict(os.environ, PATH=bin_dir + ":" + os.environ["PATH"], HIPSTACK_SLURM_NODE="gpu01",
                        HIPSTACK_SLURM_STATE_DIR=os.path.join(self.work, "state"))

    def node(self, state, reason=None):
        line = "NodeName=gpu01 Arch=x86_64 CoresPerSocket=64 State=%s ThreadsPerCore=2" % state
        if reason:
            line += " Reason=%s [root@2026-11-28T10:00:00]" % reason
        with open(self.shown, "w") as f:
            f.write(line + "\n")

    def run_check(self, sysfs):
        wrapper = os.path.join(self.work, "smi")
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\nexec "%s" --sysfs-root "%s" "$@"\n' % (SMI, sysfs))
        os.chmod(wrapper, stat.S_IRWXU)
        r = subprocess.run([SLURM], env=dict(self.env, HIPSTACK_SMI=wrapper), capture_output=True, text=True, timeout=60)
        calls = open(self.calls).read().splitlines() if os.path.exists(self.calls) else []
        if os.path.exists(self.calls):
            os.remove(self.calls)
        return r.returncode, calls

    def test_drain_on_failure(self):
        self.node("IDLE")
        rc, calls = self.run_check(os.path.join(CAPTURES, FAULTS, "sys"))
        self.assertEqual(rc, 1)
        self.assertEqual(calls, ["update NodeName=gpu01 State=DRAIN Reason=hipstack: GPU1 0000:27:00.0 "
                                 "memory.uncorrectable_ecc; GPU4 0000:85:00.0 memory.bad_page_threshold"])

    def test_an_admins_drain_is_left_alone(self):
        self.node("IDLE+DRAIN", "memory DIMM replaced, testing")
        self.assertEqual(self.run_check(os.path.join(CAPTURES, FAULTS, "sys")), (1, []))
        self.assertEqual(self.run_check(os.path.join(CAPTURES, HEALTHY, "sys")), (0, []))

    def test_resume_after_passes_in_a_row(self):
        healthy = os.path.join(CAPTURES, HEALTHY, "sys")
        self.node("IDLE+DRAIN", "hipstack: GPU1 0000:27:00.0 memory.uncorrectable_ecc")
        self.assertEqual(self.run_check(healthy), (0, []))  # one pass: not yet
        self.assertEqual(self.run_check(healthy), (0, ["update NodeName=gpu01 State=RESUME"]))
        # A failure in between starts the count again.
        self.node("IDLE+DRAIN", "hipstack: GPU1 0000:27:00.0 memory.uncorrectable_ecc")
        self.assertEqual(self.run_check(healthy), (0, []))
        self.assertEqual(self.run_check(os.path.join(CAPTURES, FAULTS, "sys")), (1, []))  # drained already
        self.assertEqual(self.run_check(healthy), (0, []))
        self.assertEqual(self.run_check(healthy), (0, ["update NodeName=gpu01 State=RESUME"]))

    def test_unchecked_changes_nothing(self):
        self.node("IDLE")
        self.assertEqual(self.run_check(unchecked_capture(self)), (2, []))
        self.node("IDLE+DRAIN", "hipstack: GPU0 0000:64:00.0 thermal.temperature")
        self.assertEqual(self.run_check(unchecked_capture(self)), (2, []))

    def test_a_link_for_the_count_is_not_followed(self):
        state = os.path.join(self.work, "state")
        os.mkdir(state)
        target = os.path.join(self.work, "victim")
        with open(target, "w") as f:
            f.write("keep\n")
        os.symlink(target, os.path.join(state, "slurm-health.passes"))
        self.node("IDLE+DRAIN", "hipstack: GPU1 0000:27:00.0 memory.uncorrectable_ecc")
        self.assertEqual(self.run_check(os.path.join(CAPTURES, HEALTHY, "sys")), (0, []))
        self.assertEqual(open(target).read(), "keep\n")
        self.assertFalse(os.path.islink(os.path.join(state, "slurm-health.passes")))


PREFIX = "hipstack.feature.node.kubernetes.io/"


class NfdTest(unittest.TestCase):
    def labels(self, *args, env=None):
        r = subprocess.run([SMI, *args, "static", "--nfd"], capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        out = {}
        for line in r.stdout.splitlines():
            name, _, value = line.partition("=")
            self.assertTrue(name.startswith(PREFIX), line)
            # A Kubernetes label value: at most 63 of [A-Za-z0-9._-], alphanumeric at both ends.
            self.assertRegex(value, r"^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$", line)
            out[name[len(PREFIX):]] = value
        j = subprocess.run([SMI, *args, "--json", "static", "--nfd"], capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual({k[len(PREFIX):]: v for k, v in json.loads(j.stdout)["labels"].items()}, out)
        return out

    def test_amd_node(self):
        spx = os.path.join(CAPTURES, HEALTHY, "sys")
        self.assertEqual(self.labels("--sysfs-root", spx), {
            "gpu.count": "8", "gpu.vendor": "amd", "gpu.model": "AMD-Instinct-MI300X", "gpu.device-type": "discrete",
            "gpu.gfx-target": "gfx942", "gpu.compute-units": "304", "gpu.vram-gib": "191", "gpu.driver": "amdgpu",
            "gpu.compute-partition": "SPX", "gpu.memory-partition": "NPS1"})
        # A fact the GPUs do not share is left out, not guessed; the rest stays.
        work = tempfile.mkdtemp(prefix="nfd-")
        self.addCleanup(shutil.rmtree, work, True)
        subprocess.run(["cp", "-a", spx, os.path.join(work, "sys")], check=True)
        with open(os.path.join(work, "sys/class/drm/card16/device/current_compute_partition"), "w") as f:
            f.write("CPX\n")
        mixed = self.labels("--sysfs-root", os.path.join(work, "sys"))
        self.assertNotIn("gpu.compute-partition", mixed)
        self.assertEqual((mixed["gpu.count"], mixed["gpu.memory-partition"]), ("8", "NPS1"))
        self.assertEqual(self.labels("--sysfs-root", spx, "-g", "0")["gpu.count"], "1")

    def test_nvidia_node(self):
        empty = tempfile.mkdtemp(prefix="nfd-nvidia-")
        self.addCleanup(shutil.rmtree, empty, True)
        labels = self.labels("--direct", "--sysfs-root", empty, env=fake_nvml_env(self, "h200.txt"))
        self.assertEqual(labels, {
            "gpu.count": "1", "gpu.vendor": "nvidia", "gpu.model": "NVIDIA-H200", "gpu.device-type": "discrete",
            "gpu.gfx-target": "sm_90", "gpu.architecture": "hopper", "gpu.compute-capability": "9.0",
            "gpu.compute-units": "132", "gpu.vram-gib": "140", "gpu.driver": "nvidia", "gpu.driver-version": "580.159.04"})


def main():
    global SMI, CAPTURES, NPD_CONFIG, SLURM
    SMI, CAPTURES, NPD_CONFIG, SLURM = (os.path.abspath(a) for a in sys.argv[1:5])
    unittest.main(argv=sys.argv[:1] + sys.argv[5:], verbosity=2)


if __name__ == "__main__":
    main()
