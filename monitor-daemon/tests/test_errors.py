#!/usr/bin/python3
"""Errors kept and aged by hipstack-smid (docs/errors.md, "Kept and aged"), end to end.

NVIDIA: the fake NVML plays one XID of every action class of NVIDIA's catalogue (and an unknown
code, a recurrence and a row-remapping pair); each must reach ListErrors, `hipstack-smi errors`,
the errors.recent health finding (GetHealth and /metrics), `health --npd`'s exit code and line, and
hipstack-slurm-health's drain, with the catalogue's action; and survive a restart (the error store).
AMD: a capture's GPU gets a CPER ring written by make_cper_records (records built from the UEFI and
amdgpu layouts) with records of every severity; each must reach WatchEvents as a "cper" event,
/metrics' hipstack_gpu_cper_records_total and health with its action. Ageing: the records' times
are the clock the test controls (a fatal record written just inside the age limit stops failing
health once it passes it, and the Slurm script resumes the node); a restart neither loses nor counts
again what the store holds.

Usage: test_errors.py HIPSTACK_SMID HIPSTACK_SMI CAPTURES_DIR PROTO_DIR MAKE_CPER_RECORDS SLURM_SCRIPT
       [unittest arguments]; the fake NVML comes from FAKE_NVML_FULL and FAKE_NVML_SCRIPTS_DIR.
Every daemon is started and stopped (by PID) by the test that uses it; nothing waits on a sleep.
"""
import json
import os
import re
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import test_grpc as base
from smid_http import http_get, parse_metrics, series
from test_daemon import promtool_check

MAKE = SLURM = None
SPX = "constructed/mi300x-8gpu-spx-nps1"


def catalogue():
    r = subprocess.run([base.SMI, "--json", "ras", "--xid-catalogue"], capture_output=True, text=True, timeout=30, check=True)
    return {x["code"]: x for x in json.loads(r.stdout)["xids"]}


def verdict_name(v):
    return base.pb.Verdict.Name(v).replace("VERDICT_", "")


class ErrorTest(base.GrpcTest):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="smid-errors-")
        self.addCleanup(shutil.rmtree, self.work, True)
        self.db = os.path.join(self.work, "errors.db")

    def start_with(self, sysfs, extra="", env=None):
        saved = dict(os.environ)
        os.environ.update(env or {})
        try:
            return self.start("error_db = %s\nslow_interval_ms = 300\ndbus = off\n%s" % (self.db, extra), sysfs=sysfs)
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def finding(self, gpu=0):
        device = self.stub.GetHealth(base.pb.GetHealthRequest(devices=[str(gpu)])).devices[0]
        found = [f for f in device.findings if f.check == "errors.recent"]
        self.assertEqual(len(found), 1, device)
        return found[0], verdict_name(device.verdict)

    def wait_finding(self, predicate, what, gpu=0, timeout=10.0):
        deadline = time.monotonic() + timeout
        while True:
            f, overall = self.finding(gpu)
            if predicate(f):
                return f, overall
            if time.monotonic() > deadline:
                self.fail("errors.recent never %s: last %s\n%s" % (what, f, self.daemon.stderr()))
            time.sleep(0.05)

    def metrics(self):
        status, _, body = http_get(self.daemon.http_port, "/metrics")
        self.assertEqual(status, 200)
        return body, parse_metrics(body)

    def smi(self, *args):
        env = dict(os.environ, HIPSTACK_SMID_SOCKET=self.daemon.socket)
        return subprocess.run([base.SMI, *args], capture_output=True, text=True, timeout=30, env=env)

    def slurm(self, state, reason=None):
        """hipstack-slurm-health against this daemon, with an scontrol that shows `state` and records
        what it is asked: (exit code, [update calls])."""
        bin_dir = os.path.join(self.work, "bin")
        os.makedirs(bin_dir, exist_ok=True)
        calls, shown = os.path.join(self.work, "calls"), os.path.join(self.work, "shown")
        with open(os.path.join(bin_dir, "scontrol"), "w") as f:
            f.write('#!/bin/bash\nif [ "$1" = show ]; then cat "%s"; else printf "%%s\\n" "$*" >> "%s"; fi\n' % (shown, calls))
        os.chmod(os.path.join(bin_dir, "scontrol"), stat.S_IRWXU)
        with open(shown, "w") as f:
            f.write("NodeName=gpu01 State=%s ThreadsPerCore=2%s\n" % (state, " Reason=%s [root@2026-12-07T10:00:00]" % reason if reason else ""))
        env = dict(os.environ, PATH=bin_dir + ":" + os.environ["PATH"], HIPSTACK_SLURM_NODE="gpu01", HIPSTACK_SMI=base.SMI,
                   HIPSTACK_SMID_SOCKET=self.daemon.socket, HIPSTACK_SLURM_STATE_DIR=os.path.join(self.work, "state"))
        r = subprocess.run([SLURM], env=env, capture_output=True, text=True, timeout=60)
        made = []
        if os.path.exists(calls):
            with open(calls) as f:
                made = f.read().splitlines()
            os.remove(calls)
        return r.returncode, made

    def forget_store(self):
        """The next daemon starts with no store (its WAL and shared-memory files go with it)."""
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(self.db + suffix):
                os.remove(self.db + suffix)

    def stored(self):
        with sqlite3.connect(self.db) as db:
            return db.execute("SELECT source, code, action FROM gpu_errors ORDER BY id").fetchall()


class NvidiaXids(ErrorTest):
    """One daemon per action class on the fake NVML: GPU 0 reports the class's XID(s)."""

    def script(self, xids):
        """The H100 script with GPU 0's XIDs replaced (batches separated by |)."""
        with open(os.path.join(os.environ["FAKE_NVML_SCRIPTS_DIR"], "h100x2-mig.txt")) as f:
            text = f.read()
        text, n = re.subn(r"^0\.xid_events = .*$", "0.xid_events = " + xids if xids else "", text, flags=re.M)
        self.assertEqual(n, 1)
        path = os.path.join(self.work, "h100.txt")
        with open(path, "w") as f:
            f.write(text)
        return path

    def start_nvidia(self, xids):
        empty = os.path.join(self.work, "sys")
        os.makedirs(empty, exist_ok=True)
        return self.start_with(empty, env={"HIPSTACK_NVML_LIBRARY": os.environ["FAKE_NVML_FULL"],
                                           "HIPSTACK_FAKE_NVML_SCRIPT": self.script(xids)})

    def check_class(self, xids, count, action, verdict):
        self.start_nvidia(xids)
        # Every XID of the script judged ("XID 79 x2"; batches come one sample apart).
        f, overall = self.wait_finding(lambda f: sum(map(int, re.findall(r" x(\d+)", f.reading))) == count, "judged %d XIDs" % count)
        self.assertEqual(verdict_name(f.verdict), verdict, f)
        self.assertTrue(f.message.endswith("; action: " + action), f.message)
        listed = self.stub.ListErrors(base.pb.ListErrorsRequest(devices=["0"]))
        self.assertEqual(len(listed.errors), count, listed)
        self.assertTrue(all(e.source == "xid" and e.recent and e.device_index == 0 for e in listed.errors), listed)
        doc = json.loads(self.smi("--json", "errors", "-g", "0").stdout)
        self.assertEqual(len(doc["errors"]), count)
        self.assertEqual(doc["store"], self.db, doc)
        body, samples = self.metrics()
        promtool_check(self, body)
        gpu0 = {l["uuid"] for l, _ in series(samples, "hipstack_gpu_up", gpu="0")}
        health = [v for l, v in series(samples, "hipstack_gpu_health", check="errors.recent") if l["uuid"] in gpu0]
        self.assertEqual(health, [{"PASS": 0, "WARN": 1, "FAIL": 2}[verdict]])
        xid_series = series(samples, "hipstack_gpu_xid_errors_total", gpu="0")
        self.assertTrue(xid_series and all(l["action"] for l, _ in xid_series), xid_series)
        npd = self.smi("health", "--npd")
        rc, calls = self.slurm("IDLE")
        if verdict == "FAIL":
            self.assertEqual(overall, "FAIL")
            self.assertEqual(npd.returncode, 1, npd.stdout)
            self.assertIn("errors.recent=" + action, npd.stdout)
            self.assertEqual((rc, len(calls)), (1, 1), calls)
            self.assertIn("State=DRAIN", calls[0])
            self.assertIn("errors.recent=" + action, calls[0])
        else:
            self.assertNotIn("errors.recent", npd.stdout)
            self.assertEqual((rc, calls), (npd.returncode, []))
        return self.stored()

    def test_every_action_class(self):
        xids = catalogue()
        by_action = {}
        for code in sorted(xids):
            by_action.setdefault(xids[code]["action"], code)
        self.assertGreaterEqual(len(by_action), 6, by_action)
        for action, code in sorted(by_action.items()):
            with self.subTest(action=action, xid=code):
                self.check_class(str(code), 1, action, xids[code]["verdict"])
                self.daemon.stop()
                self.forget_store()
        with self.subTest("a code no catalogue has"):
            self.check_class("12345", 1, "unknown", "WARN")

    def test_escalations(self):
        # XID 79 again: NVIDIA's investigatory bucket; 48 with a row remapping: drain and reset.
        self.check_class("79 | 79", 2, catalogue()[79]["if_repeated"], "FAIL")
        self.daemon.stop()
        self.forget_store()
        self.check_class("48, 63", 2, "drain_and_reset", "FAIL")

    def test_kept_across_a_restart(self):
        """The GPU reports XID 79 in the first run only: the second run still fails its health from
        the store, and its rows are not written twice."""
        self.check_class("79", 1, "reboot_node", "FAIL")
        self.daemon.stop()
        self.start_nvidia("")
        f, overall = self.wait_finding(lambda f: verdict_name(f.verdict) == "FAIL", "failed from the store")
        self.assertIn("XID 79 x1", f.reading)
        self.assertEqual(overall, "FAIL")
        listed = self.stub.ListErrors(base.pb.ListErrorsRequest())
        self.assertEqual([(e.code, e.action) for e in listed.errors], [(79, "reboot_node")])
        self.assertEqual(self.stored(), [("xid", 79, "reboot_node")])


class AmdCper(ErrorTest):
    """GPU 0 of an MI300X capture with a CPER ring the test writes (under its PCI address)."""

    def setUp(self):
        super().setUp()
        capture = base.capture(SPX)
        self.root = os.path.join(self.work, "sys")
        os.makedirs(self.root)
        for entry in os.listdir(capture):
            if entry != "kernel":
                os.symlink(os.path.join(capture, entry), os.path.join(self.root, entry))
        bdf = json.loads(subprocess.run([base.SMI, "--sysfs-root", self.root, "--json", "list"], capture_output=True, text=True,
                                        timeout=30, check=True).stdout)["devices"][0]["bdf"]
        folder = os.path.join(self.root, "kernel/debug/dri", bdf)
        os.makedirs(folder)
        self.ring_file = os.path.join(folder, "amdgpu_ring_cper")

    def ring(self, *records):
        """Writes the ring: records as (kind, UNIX seconds)."""
        subprocess.run([MAKE, "--ring", self.ring_file] + ["%s@%d" % (kind, at) for kind, at in records], check=True)

    def wait_listed(self, count):
        deadline = time.monotonic() + 10
        while len(self.stub.ListErrors(base.pb.ListErrorsRequest(source="cper")).errors) != count:
            if time.monotonic() > deadline:
                self.fail("never %d CPER records kept:\n%s" % (count, self.daemon.stderr()))
            time.sleep(0.05)

    def follow_events(self):
        """WatchEvents from now on, collected by a thread; returns the list it fills."""
        got = []
        stream = self.stub.WatchEvents(base.pb.WatchEventsRequest())
        self.addCleanup(stream.cancel)

        def read():
            try:
                for batch in stream:
                    got.extend(batch.events)
            except base.grpc.RpcError:
                pass
        threading.Thread(target=read, daemon=True).start()
        return got

    def test_every_severity(self):
        now = int(time.time())
        written = [("threshold", now - 2 * 86400)]  # two days old: kept, not judged
        self.ring(*written)
        self.start_with(self.root, "error_max_age_s = 86400\n")
        events = self.follow_events()
        self.wait_listed(1)
        f, _ = self.wait_finding(lambda f: f.reading == "none", "passed with the old record only")
        self.assertEqual(verdict_name(f.verdict), "PASS")
        # Each record's own action (its event's), and the finding's: the worst recent one's.
        steps = [("corrected", "none", "PASS", "none"), ("recoverable", "restart_app", "WARN", "restart_app"),
                 ("threshold", "contact_support", "FAIL", "contact_support"),
                 ("informational", "contact_support", "FAIL", "contact_support"), ("fatal", "reset_gpu", "FAIL", "contact_support")]
        for kind, action, verdict, worst in steps:
            with self.subTest(kind=kind):
                severity = "fatal" if kind == "threshold" else kind
                matching = lambda: [e for e in events if (e.kind, e.action, e.after) == ("cper", action, severity)]  # noqa: E731
                before = len(matching())
                written.append((kind, now - 60))
                self.ring(*written)
                self.wait_listed(len(written))
                # "CPER corrected x1, CPER fatal x2": every recent record counted once.
                f, overall = self.wait_finding(lambda f: sum(map(int, re.findall(r" x(\d+)", f.reading))) == len(written) - 1,
                                               "judged the " + kind + " record")
                self.assertEqual((verdict_name(f.verdict), overall == "FAIL"), (verdict, verdict == "FAIL"), f)
                self.assertTrue(f.message.endswith("; action: " + worst), f.message)
                # This record's own event, with its action and severity.
                deadline = time.monotonic() + 10
                while len(matching()) == before and time.monotonic() < deadline:
                    time.sleep(0.05)
                self.assertEqual(len(matching()), before + 1, [(e.kind, e.action, e.after, e.message) for e in events])
                self.assertEqual(matching()[-1].device_index, 0)
        body, samples = self.metrics()
        promtool_check(self, body)
        counted = {(l["severity"], l["action"]): v for l, v in series(samples, "hipstack_gpu_cper_records_total", gpu="0")}
        self.assertEqual(counted, {("fatal", "contact_support"): 2, ("corrected", "none"): 1, ("recoverable", "restart_app"): 1,
                                   ("informational", "contact_support"): 1, ("fatal", "reset_gpu"): 1})
        listed = self.stub.ListErrors(base.pb.ListErrorsRequest(source="cper"))
        self.assertEqual(len(listed.errors), 6)
        self.assertEqual([e.recent for e in listed.errors].count(False), 1)
        npd = self.smi("health", "--npd")
        self.assertEqual(npd.returncode, 1, npd.stdout)
        self.assertIn("GPU0 ", npd.stdout)
        self.assertIn("errors.recent=contact_support", npd.stdout)
        table = self.smi("errors", "-g", "0")
        self.assertEqual(table.returncode, 0, table.stderr)
        self.assertIn("CPER fatal", table.stdout)
        # The same ring after a restart: nothing counted or stored twice, the verdict kept.
        self.daemon.stop()
        self.start_with(self.root, "error_max_age_s = 86400\n")
        f, _ = self.wait_finding(lambda f: verdict_name(f.verdict) == "FAIL", "failed after the restart")
        _, samples = self.metrics()
        self.assertEqual(series(samples, "hipstack_gpu_cper_records_total", gpu="0"), [])
        self.assertEqual(len(self.stored()), 6)

    def test_ageing(self):
        """A fatal record written 8 s inside a 1-hour limit fails health, then passes once older;
        Slurm drains on the failure and resumes after two passes in a row."""
        self.ring(("fatal", int(time.time()) - 3600 + 8))
        self.start_with(self.root, "error_max_age_s = 3600\n")
        f, overall = self.wait_finding(lambda f: verdict_name(f.verdict) == "FAIL", "failed on the young record")
        self.assertEqual(overall, "FAIL")
        failed_at = time.monotonic()
        rc, calls = self.slurm("IDLE")
        self.assertEqual(rc, 1)
        self.assertEqual(len(calls), 1)
        reason = re.search(r"Reason=(.*)$", calls[0]).group(1)
        self.assertIn("errors.recent=reset_gpu", reason)
        f, _ = self.wait_finding(lambda f: f.reading == "none", "aged out", timeout=20)
        self.assertEqual(verdict_name(f.verdict), "PASS")
        self.assertGreater(time.monotonic() - failed_at, 2.0, "aged out before its time")
        self.assertEqual(self.slurm("IDLE+DRAIN", reason), (0, []))  # one pass: not yet
        self.assertEqual(self.slurm("IDLE+DRAIN", reason), (0, ["update NodeName=gpu01 State=RESUME"]))
        self.assertFalse(self.stub.ListErrors(base.pb.ListErrorsRequest()).errors[0].recent)


def main():
    global MAKE, SLURM
    base.SMID, base.SMI, base.CAPTURES, base.PROTO = (os.path.abspath(a) for a in sys.argv[1:5])
    MAKE, SLURM = (os.path.abspath(a) for a in sys.argv[5:7])
    for name in ("FAKE_NVML_FULL", "FAKE_NVML_SCRIPTS_DIR"):
        if not os.environ.get(name):
            sys.exit("%s is not set: ctest names the fake NVML" % name)
    stubs = tempfile.mkdtemp(prefix="smid-stubs-")
    try:
        base.load_grpc(stubs)
        unittest.main(argv=[sys.argv[0]] + sys.argv[7:], verbosity=2)
    finally:
        shutil.rmtree(stubs, ignore_errors=True)


if __name__ == "__main__":
    main()
