#!/usr/bin/env python3
"""hipstack-smi ras's error records (docs/errors.md): NVIDIA's XID catalogue, CPER records from saved
files and from the driver's ring of AMD GPUs in a capture's root.

Usage: test_errors.py HIPSTACK_SMI MAKE_CPER_RECORDS CAPTURES_DIR

The records are built by make_cper_records (smi-lib/tests/cper_builder.hpp: the UEFI and amdgpu
layouts): a fatal, a corrected and a bad-page-threshold record, a malformed one, and the ring's
debugfs file (its 12-byte prefix, then an old threshold record and two recent ones).
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

SMI = MAKE = CAPTURES = None
CAPTURE = "constructed/mi300x-8gpu-spx-nps1/sys"


def smi(*args, check_rc=None):
    r = subprocess.run([SMI, *args], capture_output=True, text=True, timeout=60)
    if check_rc is not None and r.returncode != check_rc:
        raise AssertionError(f"{args}: exit {r.returncode}, wanted {check_rc}\n{r.stdout}\n{r.stderr}")
    return r


class Records(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="smi-cper-")
        cls.now = int(time.time())
        subprocess.run([MAKE, cls.dir, str(cls.now)], check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_xid_catalogue(self):
        doc = json.loads(smi("--json", "ras", "--xid-catalogue", check_rc=0).stdout)
        xids = {x["code"]: x for x in doc["xids"]}
        self.assertEqual(xids[79]["mnemonic"], "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS")
        self.assertEqual((xids[79]["action"], xids[79]["verdict"], xids[79]["nvidia_immediate"]), ("reboot_node", "FAIL", "RESTART_BM"))
        self.assertEqual((xids[13]["action"], xids[13]["verdict"], xids[13]["fault"]), ("restart_app", "PASS", "application"))
        self.assertEqual((xids[48]["action"], xids[48]["if_repeated"]), ("reset_gpu", "contact_support"))
        self.assertEqual(xids[95]["action"], "reset_gpu")
        rows = list(csv.DictReader(io.StringIO(smi("--csv", "ras", "--xid-catalogue", check_rc=0).stdout)))
        self.assertEqual(len(rows), len(xids))
        self.assertEqual(next(r for r in rows if r["code"] == "94")["action"], "restart_app")
        table = smi("ras", "--xid-catalogue", check_rc=0).stdout
        self.assertIn("ROBUST_CHANNEL_GPU_ECC_DBE", table)

    def test_a_saved_record_decoded(self):
        doc = json.loads(smi("--json", "ras", "--cper-file", self.path("fatal.cper"), check_rc=0).stdout)
        self.assertEqual(doc["problems"], [])
        [record] = doc["records"]
        self.assertEqual((record["severity"], record["action"], record["creator_id"], record["notification"]),
                         ("fatal", "reset_gpu", "amdgpu", "MCE"))
        self.assertEqual(record["time"], time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(self.now)))
        self.assertEqual(record["sections"][0]["block"], "UMC (memory controller)")
        self.assertEqual(record["sections"][0]["bank"]["address"], "0x1000")
        with open(self.path("fatal.cper"), "rb") as f:
            self.assertEqual(record["raw_hex"], f.read().hex(), "the record's bytes are kept exactly")
        threshold = json.loads(smi("--json", "ras", "--cper-file", self.path("threshold.cper"), check_rc=0).stdout)["records"][0]
        self.assertEqual((threshold["action"], threshold["sections"][0]["afid"]), ("contact_support", 19))
        rows = list(csv.DictReader(io.StringIO(smi("--csv", "ras", "--cper-file", self.path("corrected.cper"), check_rc=0).stdout)))
        self.assertEqual([(r["severity"], r["action"], r["section_type"], r["fru"]) for r in rows],
                         [("corrected", "none", "nonstandard", "OAM1")])

    def test_a_malformed_record_is_named_and_the_rest_read(self):
        r = smi("--json", "ras", "--cper-file", self.path("malformed.cper"), check_rc=1)
        doc = json.loads(r.stdout)
        self.assertEqual([x["severity"] for x in doc["records"]], ["corrected"])
        self.assertEqual(len(doc["problems"]), 1, doc["problems"])
        self.assertIn("record at byte 0: at byte 12: error severity 7 (UEFI defines 0-3)", doc["problems"][0])
        r = smi("ras", "--cper-file", self.path("malformed.cper"), check_rc=1)
        self.assertIn("error severity 7", r.stderr)
        self.assertIn("corrected", r.stdout)

    def test_bad_arguments(self):
        missing = smi("ras", "--cper-file", self.path("nothing-here"), check_rc=2)
        self.assertIn("nothing-here", missing.stderr)
        self.assertIn("--severity", smi("ras", "--cper-file", self.path("fatal.cper"), "--severity", "bad", check_rc=2).stderr)
        self.assertIn("--since", smi("ras", "--cper-file", self.path("fatal.cper"), "--since", "yesterday", check_rc=2).stderr)
        fifo = os.path.join(self.dir, "fifo")
        os.mkfifo(fifo)
        self.assertIn("not a regular file", smi("ras", "--cper-file", fifo, check_rc=2).stderr, "a FIFO is never waited on")
        smi("ras", "--follow", check_rc=2)
        smi("ras", "--cper-file", self.path("fatal.cper"), "--follow", check_rc=2)
        smi("ras", "--xid-catalogue", "--cper", check_rc=2)
        smi("ras", "--cper", "--host", "127.0.0.1:1", check_rc=2)


class Ring(unittest.TestCase):
    """--cper on a capture whose GPU 0 has the ring under its PCI address and GPU 1 under its DRM
    card number; the other GPUs have none."""

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="smi-cper-ring-")
        records = os.path.join(cls.work, "records")
        os.makedirs(records)
        subprocess.run([MAKE, records, str(int(time.time()))], check=True)
        capture = os.path.join(CAPTURES, CAPTURE)
        cls.root = os.path.join(cls.work, "sys")
        os.makedirs(cls.root)
        for entry in os.listdir(capture):
            if entry != "kernel":
                os.symlink(os.path.join(capture, entry), os.path.join(cls.root, entry))
        devices = json.loads(smi("--sysfs-root", cls.root, "--json", "list", check_rc=0).stdout)["devices"]
        card = json.loads(smi("--sysfs-root", cls.root, "--json", "static", "-g", "1", "-m", "drm_card", check_rc=0).stdout)
        card_number = card["devices"][0]["metrics"]["drm_card"]["value"]
        for folder in (devices[0]["bdf"], str(card_number)):
            os.makedirs(os.path.join(cls.root, "kernel/debug/dri", folder))
            shutil.copy(os.path.join(records, "amdgpu_ring_cper"), os.path.join(cls.root, "kernel/debug/dri", folder))
        cls.bdf0 = devices[0]["bdf"]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, True)

    def cper(self, *args, rc=0):
        return smi("--sysfs-root", self.root, *args, check_rc=rc)

    def test_the_rings_records_oldest_first(self):
        doc = json.loads(self.cper("--json", "ras", "--cper", "-g", "0,1").stdout)
        self.assertEqual(doc["unavailable"], [])
        self.assertEqual([(x["gpu"], x["severity"]) for x in doc["records"]],
                         [(0, "fatal"), (0, "fatal"), (0, "corrected"), (1, "fatal"), (1, "fatal"), (1, "corrected")])
        self.assertEqual(doc["records"][0]["bdf"], self.bdf0)
        self.assertTrue(doc["records"][0]["source"].endswith("/kernel/debug/dri/%s/amdgpu_ring_cper" % self.bdf0))
        self.assertEqual(doc["records"][0]["sections"][0]["afid"], 19, "the old record is the threshold one")

    def test_severity_and_since_filter(self):
        doc = json.loads(self.cper("--json", "ras", "--cper", "-g", "0", "--severity", "corrected").stdout)
        self.assertEqual([x["severity"] for x in doc["records"]], ["corrected"])
        doc = json.loads(self.cper("--json", "ras", "--cper", "-g", "0", "--since", "1d").stdout)
        self.assertEqual([x["severity"] for x in doc["records"]], ["fatal", "corrected"], "the 2025 record is older than a day")

    def test_a_gpu_without_a_ring_is_named_never_taken_for_clean(self):
        r = self.cper("--json", "ras", "--cper", "-g", "0,2", rc=1)
        doc = json.loads(r.stdout)
        self.assertEqual([u["gpu"] for u in doc["unavailable"]], [2])
        self.assertIn("no CPER ring", doc["unavailable"][0]["why"])
        r = self.cper("ras", "--cper", "-g", "2", rc=1)
        self.assertIn("No CPER records.", r.stdout)
        self.assertIn("GPU 2: no CPER records read", r.stderr)

    def test_follow_prints_each_record_once(self):
        r = self.cper("--json", "ras", "--cper", "-g", "0", "--follow", "-w", "0.01", "-i", "3")
        lines = [json.loads(line) for line in r.stdout.splitlines()]
        self.assertEqual([x["severity"] for x in lines], ["fatal", "fatal", "corrected"], "three looks, each record once")


if __name__ == "__main__":
    SMI, MAKE, CAPTURES = sys.argv[1], sys.argv[2], sys.argv[3]
    unittest.main(argv=sys.argv[:1], verbosity=2)
