#!/usr/bin/env python3
"""`hipstack-smi capture` is run as root on hosts with other users (docs/captures.md, docs/security.md):

- it writes only into a folder it creates (or an empty owner-only one of the caller), never through a
  link planted there, keeps owner-only modes, checks every write and lists every file with its
  SHA-256 in MANIFEST;
- it reads only inside the source root: links below the entry points (a live sysfs's device, driver
  and subsystem, or a planted serial_number -> /etc/passwd) are not followed, FIFOs are not opened,
  and a live-layout tree is captured in bounded time and reads back as the original;
- a control write through a planted link is refused and the link's target is untouched.

Usage: test_capture.py HIPSTACK_SMI CAPTURES_DIR TOOLS_DIR
"""
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

SMI = CAPTURES = TOOLS = None
RX6900XT = "real/lact/rx6900xt/sys"


def run(*args, expect=0, timeout=60, prefix=()):
    proc = subprocess.run([*prefix, SMI, *args], capture_output=True, text=True, timeout=timeout)
    if proc.returncode != expect:
        raise AssertionError(f"{args}: exit {proc.returncode}, expected {expect}\nstdout: {proc.stdout}\nstderr: {proc.stderr}")
    return proc


class Capture(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="hipstack-capture-")
        self.addCleanup(shutil.rmtree, self.work, True)

    def source_copy(self, capture=RX6900XT):
        src = os.path.join(self.work, "src")
        shutil.copytree(os.path.join(CAPTURES, capture), src, symlinks=True)
        return src

    def manifest(self, out):
        with open(os.path.join(out, "MANIFEST")) as f:
            lines = [line.rstrip("\n").split("\t") for line in f if not line.startswith("#")]
        return {path: (digest, int(size), mode) for digest, size, mode, path in lines}

    def test_refuses_output_folders_it_cannot_trust(self):
        src = os.path.join(CAPTURES, RX6900XT)
        full = os.path.join(self.work, "full")
        os.makedirs(os.path.join(full, "proc"))
        self.assertIn("not empty", run("capture", full, "--sysfs-root", src, expect=2).stderr)
        target = os.path.join(self.work, "elsewhere")
        os.mkdir(target, 0o700)
        link = os.path.join(self.work, "link")
        os.symlink(target, link)
        self.assertIn("not a folder", run("capture", link, "--sysfs-root", src, expect=2).stderr)
        self.assertEqual(os.listdir(target), [])
        shared = os.path.join(self.work, "shared")
        os.mkdir(shared)
        os.chmod(shared, 0o777)
        self.assertIn("owner-only", run("capture", shared, "--sysfs-root", src, expect=2).stderr)
        if os.geteuid() == 0:
            theirs = os.path.join(self.work, "theirs")
            os.mkdir(theirs, 0o700)
            os.chown(theirs, 65534, 65534)
            self.assertIn("uid 65534", run("capture", theirs, "--sysfs-root", src, expect=2).stderr)
        mine = os.path.join(self.work, "mine")
        os.mkdir(mine, 0o700)  # as mktemp -d makes it: accepted
        run("capture", mine, "--sysfs-root", src)
        self.assertTrue(os.path.exists(os.path.join(mine, "MANIFEST")))

    def test_a_planted_folder_of_links_is_never_written_through(self):
        # What a local user prepares for root's `capture /tmp/node1 --processes` (OUT/sys is still
        # empty, which is all the old check looked at; OUT/proc/PID/comm leads to root's file).
        victim = os.path.join(self.work, "victim")
        with open(victim, "w") as f:
            f.write("untouched\n")
        planted = os.path.join(self.work, "node1")
        os.makedirs(os.path.join(planted, "proc", "48213"))
        os.symlink(victim, os.path.join(planted, "proc", "48213", "comm"))
        node = os.path.join(CAPTURES, "constructed/mi300x-8gpu-cpx-nps1")
        run("capture", planted, "--processes", "--sysfs-root", f"{node}/sys", "--procfs-root", f"{node}/proc", expect=2)
        with open(victim) as f:
            self.assertEqual(f.read(), "untouched\n")

    def test_reads_stay_inside_the_source_root_and_skip_fifos(self):
        src = self.source_copy()
        device = os.path.join(src, "class/drm/card0/device")
        os.symlink("/etc/passwd", os.path.join(device, "serial_number"))
        os.symlink("/etc", os.path.join(device, "hwmon", "hwmon9"))
        os.symlink("../../../..", os.path.join(device, "subsystem"))  # a loop, as live sysfs has
        os.mkfifo(os.path.join(device, "power_state_fifo"))
        secret = os.path.join(device, "fdinfo_secret")
        with open(secret, "w") as f:
            f.write("owner only\n")
        os.chmod(secret, 0o600)
        out = os.path.join(self.work, "out")
        proc = run("capture", out, "--sysfs-root", src, timeout=30)
        self.assertRegex(proc.stdout, r"[1-9]\d* links not followed")
        copied = {os.path.relpath(os.path.join(d, f), out) for d, _, files in os.walk(out) for f in files}
        self.assertNotIn("sys/class/drm/card0/device/serial_number", copied)
        self.assertFalse([p for p in copied if "/hwmon9/" in p or "/subsystem/" in p or p.endswith("/subsystem")])
        with open("/etc/passwd", "rb") as f:
            passwd = f.read()
        for path in copied:  # not a byte of /etc/passwd under any name
            with open(os.path.join(out, path), "rb") as f:
                self.assertNotEqual(f.read(), passwd, path)
        self.assertNotIn("sys/class/drm/card0/device/power_state_fifo", copied)
        # Owner-only files stay owner-only; the folder is the caller's alone.
        self.assertEqual(stat.S_IMODE(os.stat(os.path.join(out, "sys/class/drm/card0/device/fdinfo_secret")).st_mode), 0o600)
        self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o700)
        # The manifest lists every file with the right size and SHA-256.
        listed = self.manifest(out)
        self.assertEqual(set(listed), copied - {"MANIFEST"})
        for path, (digest, size, _) in listed.items():
            with open(os.path.join(out, path), "rb") as f:
                data = f.read()
            self.assertEqual((hashlib.sha256(data).hexdigest(), len(data)), (digest, size), path)

    def test_a_fifo_where_the_library_reads_does_not_hang_the_capture(self):
        # The capture reads what the library reads (docs/captures.md): a FIFO planted in place of
        # gpu_metrics and a hwmon input is refused there too, never waited on.
        src = self.source_copy()
        device = os.path.join(src, "class/drm/card0/device")
        hwmon = os.path.join(device, "hwmon", os.listdir(os.path.join(device, "hwmon"))[0])
        for path in (os.path.join(device, "gpu_metrics"), os.path.join(hwmon, "temp1_input")):
            if os.path.exists(path):
                os.remove(path)
            os.mkfifo(path)
        out = os.path.join(self.work, "out")
        run("capture", out, "--sysfs-root", src, timeout=30)
        copied = {os.path.relpath(os.path.join(d, f), out) for d, _, files in os.walk(out) for f in files}
        self.assertNotIn("sys/class/drm/card0/device/gpu_metrics", copied)
        self.assertIn("sys/class/drm/card0/device/uevent", copied)

    def test_live_layout_tree_is_captured_and_reads_back(self):
        live = os.path.join(self.work, "live")
        subprocess.run([sys.executable, os.path.join(TOOLS, "live_tree.py"), os.path.join(CAPTURES, RX6900XT), live],
                       check=True, capture_output=True)
        out = os.path.join(self.work, "out")
        proc = run("capture", out, "--sysfs-root", live, timeout=30)
        self.assertIn("1 amdgpu card(s)", proc.stdout)
        self.assertLess(sum(len(files) for _, _, files in os.walk(out)), 1000)
        for command in ("static", "metric"):
            original = json.loads(run(command, "--json", "--sysfs-root", os.path.join(CAPTURES, RX6900XT)).stdout)
            copy = json.loads(run(command, "--json", "--sysfs-root", os.path.join(out, "sys")).stdout)
            self.assertEqual(original, copy, command)

    def test_a_write_error_fails_the_capture(self):
        prlimit = shutil.which("prlimit")
        self.assertIsNotNone(prlimit, "prlimit (util-linux) is required")
        out = os.path.join(self.work, "out")
        proc = run("capture", out, "--sysfs-root", os.path.join(CAPTURES, RX6900XT), expect=1,
                   prefix=(prlimit, "--fsize=2048"))
        self.assertIn("File too large", proc.stderr)
        self.assertIn("incomplete", proc.stderr)

    def test_control_writes_refuse_a_planted_link(self):
        src = self.source_copy("constructed/mi300x-8gpu-spx-nps1/sys")
        hwmon = os.path.join(src, "class/drm/card0/device/hwmon")
        cap = os.path.join(hwmon, os.listdir(hwmon)[0], "power1_cap")
        victim = os.path.join(self.work, "victim")
        shutil.copy(cap, victim)
        os.remove(cap)
        os.symlink(victim, cap)
        with open(victim) as f:
            before = f.read()
        proc = subprocess.run([SMI, "set", "-g", "0", "--power-cap", "600", "--sysfs-root", src],
                              capture_output=True, text=True, timeout=60)
        self.assertNotEqual(proc.returncode, 0, proc.stdout)
        with open(victim) as f:
            self.assertEqual(f.read(), before)


def main():
    global SMI, CAPTURES, TOOLS
    SMI, CAPTURES, TOOLS = (os.path.abspath(a) for a in sys.argv[1:4])
    program = unittest.main(argv=[sys.argv[0]] + sys.argv[4:], verbosity=2, exit=False)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
