#!/usr/bin/python3
"""Job accounting end to end (docs/jobs.md): hipstack-smi job start/stop/show/list against a real
hipstack-smid on a writable copy of a capture whose busy share and power the test changes while
the job runs; the summary is checked against the daemon's own samples (GetHistory), across a
daemon restart, in the SQLite file itself, on /metrics (hpc_job) and against bad requests.

Usage: test_jobs.py HIPSTACK_SMID HIPSTACK_SMI CAPTURES_DIR PROTO_DIR [unittest arguments]

Needs root (a client runs as nobody to be refused): exits 77 otherwise. Every daemon is started
and stopped (by PID) by the test that uses it.
"""
import ctypes
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import test_grpc as base

RX = "real/lact/rx6900xt"
RX_BUSY = "class/drm/card0/device/gpu_busy_percent"
RX_POWER = "class/drm/card0/device/hwmon/hwmon5/power1_average"  # microwatts
STUBS = None
NOBODY_CLIENT = r'''
import json, sys
sys.path.insert(0, sys.argv[2])
import grpc
from hipstack.monitor.v1 import monitor_pb2 as pb, monitor_pb2_grpc as rpc
stub = rpc.MonitorStub(grpc.insecure_channel("unix:" + sys.argv[1]))
out = {}
for name, call in (("StartJob", lambda: stub.StartJob(pb.StartJobRequest(id="intruder"))),
                   ("StopJob", lambda: stub.StopJob(pb.StopJobRequest(id="1"))),
                   ("GetJob", lambda: stub.GetJob(pb.GetJobRequest(id="1")))):
    try:
        out[name] = ["OK", call().id]
    except grpc.RpcError as e:
        out[name] = [e.code().name, e.details()]
print(json.dumps(out))
'''


def write(path, text):
    """Replaces a file whole: the daemon reads the capture while the test changes it, and a file
    truncated and then written could be read empty in between (a sysfs read never is)."""
    with open(path + ".new", "w") as f:
        f.write(text)
    os.replace(path + ".new", path)


def figures(gpu):
    """A JobGpu's figures as {name or name[instance]: value or None}."""
    return {(f.name if not f.instance else "%s[%s]" % (f.name, f.instance)): (f.value if f.known else None) for f in gpu.figures}


class JobTests(base.GrpcTest):
    def setUp(self):
        self.state = tempfile.mkdtemp(prefix="smid-jobs-")
        self.addCleanup(shutil.rmtree, self.state, True)
        self.db = os.path.join(self.state, "jobs.db")
        self.root = os.path.join(self.state, "sys")
        subprocess.run(["cp", "-a", base.capture(RX), self.root], check=True)

    def start_jobs(self, extra=""):
        # The exact energy counter is read once (costly_interval): in between the daemon exports it
        # plus the power integrated, so the energy grows with the power the test writes.
        return self.start("job_db = %s\ncostly_interval_ms = 3600000\nhistory_length = 3600\n%s" % (self.db, extra),
                          sysfs=self.root)

    def smi(self, *args):
        env = dict(os.environ, HIPSTACK_SMID_SOCKET=self.daemon.socket)
        return subprocess.run([base.SMI] + list(args), capture_output=True, text=True, timeout=30, env=env)

    def set_load(self, busy, watts):
        """Writes a busy share and a power, and waits for a sample that shows both."""
        write(os.path.join(self.root, RX_BUSY), "%d\n" % busy)
        write(os.path.join(self.root, RX_POWER), "%d\n" % (watts * 1000000))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            snapshot = self.stub.GetMetrics(base.pb.GetMetricsRequest(devices=["0"], metrics=["gpu_busy", "power_average"]))
            values = {r.metric: base.value_of(r) for r in snapshot.devices[0].readings}
            if values.get("gpu_busy") == busy and values.get("power_average") == watts:
                return
            time.sleep(0.02)
        self.fail("no sample showed busy %d %% and %d W: %s" % (busy, watts, values))

    def history(self):
        request = base.pb.GetHistoryRequest(devices=["0"], metrics=["gpu_busy", "power_average", "energy_consumed"])
        samples = []
        for s in self.stub.GetHistory(request).devices[0].samples:
            values = {r.metric: base.value_of(r) for r in s.readings}
            samples.append((s.sampled_at_unix_ms, values))
        return samples

    def test_the_summary_is_what_the_samples_say(self):
        self.start_jobs()
        self.set_load(5, 50)
        started = self.smi("job", "start", "--id", "4711", "--user", "alice", "-g", "0", "--json")
        self.assertEqual(started.returncode, 0, started.stderr)
        doc = json.loads(started.stdout)
        self.assertEqual((doc["job"]["id"], doc["job"]["user"], doc["job"]["running"]), ("4711", "alice", True))
        self.assertEqual([g["index"] for g in doc["job"]["gpus"]], [0])
        for busy, watts in ((20, 100), (60, 250), (90, 180)):
            self.set_load(busy, watts)
        stopped = self.smi("job", "stop", "--id", "4711", "--json")
        self.assertEqual(stopped.returncode, 0, stopped.stderr)
        self.assertFalse(json.loads(stopped.stdout)["already_stopped"])
        job = self.stub.GetJob(base.pb.GetJobRequest(id="4711"))
        self.assertFalse(job.running)
        gpu = job.gpus[0]
        f = figures(gpu)
        history = self.history()
        counted = [v for t, v in history if gpu.baseline_sample_unix_ms < t <= gpu.last_sample_unix_ms]
        baseline = [v for t, v in history if t == gpu.baseline_sample_unix_ms]
        self.assertEqual(len(baseline), 1, (gpu.baseline_sample_unix_ms, [t for t, _ in history]))
        self.assertEqual(f["samples"], len(counted))
        self.assertTrue({20, 60, 90} <= {v["gpu_busy"] for v in counted}, counted)
        busy = [v["gpu_busy"] for v in counted]
        power = [v["power_average"] for v in counted]
        self.assertAlmostEqual(f["busy_mean"], sum(busy) / len(busy), places=9)
        self.assertAlmostEqual(f["power_mean"], sum(power) / len(power), places=9)
        self.assertEqual(f["power_max"], 250)
        energy = counted[-1]["energy_consumed"] - baseline[0]["energy_consumed"]
        self.assertGreater(energy, 0)
        self.assertAlmostEqual(f["energy"], energy, places=6)
        self.assertEqual(f["counter_resets"], 0)
        self.assertEqual(gpu.health_start, gpu.health_end)
        self.assertIn(gpu.health_end, ("PASS", "WARN", "FAIL", "UNKNOWN"))
        # What the job keeps per GPU (jobs.md, "Size"): a fixed set of figures, whatever the job's length.
        with sqlite3.connect(self.db) as db:
            stored = db.execute("SELECT length(usage) FROM job_gpus WHERE job_id = '4711'").fetchone()[0]
        print("the stored usage of one GPU: %d bytes" % stored)
        self.assertLess(stored, 8192)
        # What people read: job show prints the same numbers; job list has the job.
        shown = self.smi("job", "show", "4711")
        self.assertEqual(shown.returncode, 0, shown.stderr)
        self.assertRegex(shown.stdout, r"busy_mean\s+%.1f %%" % f["busy_mean"])
        self.assertRegex(shown.stdout, r"power_max\s+250\.0 W")
        self.assertIn("job 4711 (user alice): started", shown.stdout)
        listed = self.smi("job", "list", "--since", "1h", "--json")
        self.assertEqual(listed.returncode, 0, listed.stderr)
        self.assertEqual([j["id"] for j in json.loads(listed.stdout)["jobs"]], ["4711"])
        self.assertEqual(json.loads(self.smi("job", "list", "--since", "@%d" % (time.time() + 60), "--json").stdout)["jobs"], [])

    def test_a_restart_mid_job_loses_nothing_sampled(self):
        self.start_jobs()
        self.set_load(30, 120)
        self.assertEqual(self.smi("job", "start", "--id", "7").returncode, 0)
        self.set_load(40, 130)
        # The accounting counts a sample at its next look (every 50 ms here): waited for.
        deadline = time.monotonic() + 10
        while True:
            running = self.stub.GetJob(base.pb.GetJobRequest(id="7")).gpus[0]
            before = figures(running)
            if before["samples"] > 0 or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        self.assertGreater(before["samples"], 0)
        taken = [t for t, _ in self.history() if t > running.baseline_sample_unix_ms]
        self.daemon.stop()  # SIGTERM (test_jobs.cpp checks that stopping writes the samples since the last look)
        with sqlite3.connect(self.db) as db:
            self.assertEqual(db.execute("PRAGMA journal_mode").fetchone()[0], "wal")
            self.assertEqual(db.execute("PRAGMA user_version").fetchone()[0], 1)
            stored = json.loads(db.execute("SELECT usage FROM job_gpus WHERE job_id = '7'").fetchone()[0])
            self.assertEqual(db.execute("SELECT stopped_ns FROM jobs WHERE id = '7'").fetchone()[0], 0)
        self.assertGreaterEqual(stored["samples"], before["samples"])
        # Every sample the daemon had taken is in the file, the newest too.
        self.assertGreaterEqual(stored["samples"], len(taken))
        self.assertGreaterEqual(stored["last_sample_ns"] // 1000000, taken[-1])
        self.assertGreaterEqual(stored["gauges"]["busy"]["count"], before["samples"])

        self.start_jobs()
        self.assertIn("job accounting resumed 1 running job(s)", self.daemon.stderr())
        self.set_load(70, 90)
        stopped = self.stub.StopJob(base.pb.StopJobRequest(id="7"))
        gpu = stopped.gpus[0]
        f = figures(gpu)
        after = [v for t, v in self.history() if stored["last_sample_ns"] // 1000000 < t <= gpu.last_sample_unix_ms]
        self.assertTrue(after and any(v["gpu_busy"] == 70 for v in after), after)
        self.assertEqual(f["samples"], stored["samples"] + len(after))
        busy = stored["gauges"]["busy"]
        self.assertAlmostEqual(f["busy_mean"], (busy["sum"] + sum(v["gpu_busy"] for v in after)) / (busy["count"] + len(after)),
                               places=9)
        # Energy: the stored growth, then the new daemon's counter from the stored last value on
        # (the capture's exact counter stands still, so the new daemon starts below the estimate
        # the old one reached: one reset, not counted as use).
        energy, resets, last = stored["counters"]["energy_consumed"]["growth"], 0, stored["counters"]["energy_consumed"]["last"]
        for v in after:
            if v["energy_consumed"] >= last:
                energy += v["energy_consumed"] - last
            else:
                resets += 1
            last = v["energy_consumed"]
        self.assertAlmostEqual(f["energy"], energy, places=6)
        self.assertEqual(f["counter_resets"], resets)
        self.assertAlmostEqual(f["sampled_time"], (gpu.last_sample_unix_ms - gpu.baseline_sample_unix_ms) / 1000, delta=0.002)
        self.assertAlmostEqual(f["wall_time"], (stopped.stopped_unix_ms - stopped.started_unix_ms) / 1000, delta=0.002)

    def test_running_jobs_label_their_gpus(self):
        mapping = os.path.join(self.state, "job-map")
        os.mkdir(mapping)
        write(os.path.join(mapping, "0"), "slurm-99\n")
        self.start_jobs("job_mapping_dir = %s\n" % mapping)
        self.assertEqual(self.smi("job", "start", "--id", "5").returncode, 0)

        def series():
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.daemon.http_port, timeout=5) as r:
                body = r.read().decode()
            return body, sorted(l.split('hpc_job="')[1].split('"')[0] for l in body.splitlines()
                                if l.startswith("hipstack_gpu_attribution_info{") and 'hpc_job="' in l)

        def wait_for(jobs):
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                body, found = series()
                if found == jobs:
                    return body
                time.sleep(0.05)
            self.fail("hpc_job series %s, not %s" % (found, jobs))

        body = wait_for(["5", "slurm-99"])
        base_labels = 'gpu="0",'
        self.assertIn('hipstack_gpu_attribution_info{%s' % base_labels, body)
        check = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True, text=True)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        self.assertEqual(self.smi("job", "stop", "--id", "5").returncode, 0)
        wait_for(["slurm-99"])
        os.unlink(os.path.join(mapping, "0"))
        wait_for([])

    def test_bad_requests_are_refused_with_the_reason(self):
        stub = self.start_jobs()
        invalid = base.grpc.StatusCode.INVALID_ARGUMENT
        self.assert_code(invalid, stub.StartJob, base.pb.StartJobRequest(id="a b"), contains="byte 1 (0x20)")
        self.assert_code(invalid, stub.StartJob, base.pb.StartJobRequest(id=""), contains="job id: empty")
        self.assert_code(invalid, stub.StartJob, base.pb.StartJobRequest(id="1" * 129), contains="more than 128")
        self.assert_code(invalid, stub.StartJob, base.pb.StartJobRequest(id="1", user="x\ny"), contains="user: byte 1")
        self.assert_code(base.grpc.StatusCode.NOT_FOUND, stub.StartJob, base.pb.StartJobRequest(id="1", devices=["9"]))
        self.assert_code(invalid, stub.ListJobs, base.pb.ListJobsRequest(limit=5000), contains="limit")
        self.assertFalse(stub.StartJob(base.pb.StartJobRequest(id="1")).already_running)
        # The same start again is a retry (its first answer lost): the running job, nothing changed.
        self.assertTrue(stub.StartJob(base.pb.StartJobRequest(id="1")).already_running)
        self.assert_code(base.grpc.StatusCode.ALREADY_EXISTS, stub.StartJob, base.pb.StartJobRequest(id="1", user="eve"),
                         contains="running on other GPUs or for another user")
        self.assert_code(invalid, stub.StartJob, base.pb.StartJobRequest(id="-rf"), contains="begins with '-'")
        self.assert_code(base.grpc.StatusCode.NOT_FOUND, stub.StopJob, base.pb.StopJobRequest(id="2"), contains="no job 2")
        self.assert_code(base.grpc.StatusCode.NOT_FOUND, stub.GetJob, base.pb.GetJobRequest(id="2"))
        first = stub.StopJob(base.pb.StopJobRequest(id="1"))
        again = stub.StopJob(base.pb.StopJobRequest(id="1"))
        self.assertFalse(first.already_stopped)
        self.assertTrue(again.already_stopped)
        self.assertEqual(again.stopped_unix_ms, first.stopped_unix_ms)
        self.assert_code(base.grpc.StatusCode.ALREADY_EXISTS, stub.StartJob, base.pb.StartJobRequest(id="1"),
                         contains="accounted already")
        # The command line says the same, with distinct exit codes (docs/jobs.md).
        for args, code, text in ((["job", "stop", "--id", "nope"], 3, "no job nope"),
                                 (["job", "start", "--id", "1"], 2, "accounted already"),
                                 (["job", "list", "--since", "yesterday"], 2, "--since \"yesterday\""),
                                 (["job", "show", "1", "-g", "0"], 2, "-g goes with job start only"),
                                 (["job", "start", "--id", "a;b"], 2, "byte 1")):
            r = self.smi(*args)
            self.assertEqual(r.returncode, code, (args, r.stdout, r.stderr))
            self.assertIn(text, r.stderr, args)
        # Only root and the admin group start and stop jobs; anyone connected may read them.
        self.daemon.stop()
        self.start_jobs("grpc_socket_group = nogroup\nadmin_group = hipstack-test-admins\n")
        os.chmod(self.daemon.dir, 0o755)
        script = os.path.join(self.daemon.dir, "client.py")
        write(script, NOBODY_CLIENT)
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", script,
                            self.daemon.socket, STUBS], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        answers = json.loads(r.stdout)
        self.assertEqual(answers["GetJob"], ["OK", "1"])
        for name in ("StartJob", "StopJob"):
            self.assertEqual(answers[name][0], "PERMISSION_DENIED", answers[name])
            self.assertIn("needs the admin role", answers[name][1])
        self.assertIn("refused StartJob for uid 65534", self.daemon.stderr())
        self.assertFalse(self.stub.GetJob(base.pb.GetJobRequest(id="1")).running)

    def test_slurm_prolog_and_epilog(self):
        self.start_jobs()
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../smi-cli/integrations/slurm/hipstack-slurm-job")

        def run(mode, **env):
            full = dict(os.environ, HIPSTACK_SMI=base.SMI, HIPSTACK_SMID_SOCKET=self.daemon.socket, **env)
            return subprocess.run([script, mode], capture_output=True, text=True, timeout=60, env=full)

        slurm = {"SLURM_JOB_ID": "900", "SLURM_JOB_USER": "bob", "SLURM_JOB_GPUS": "0"}
        r = run("prolog", **slurm)
        self.assertEqual(r.returncode, 0, r.stderr)
        job = self.stub.GetJob(base.pb.GetJobRequest(id="900"))
        self.assertEqual((job.running, job.user, [g.index for g in job.gpus]), (True, "bob", [0]))
        self.set_load(40, 100)
        r = run("epilog", **slurm)
        self.assertEqual(r.returncode, 0, r.stderr)
        job = self.stub.GetJob(base.pb.GetJobRequest(id="900"))
        self.assertFalse(job.running)
        energy = figures(job.gpus[0])["energy"]
        self.assertIn("job 900 stopped: energy %.0f J" % energy, r.stderr)
        # A job without GPUs is not accounted, and its epilog is quiet.
        for mode in ("prolog", "epilog"):
            r = run(mode, SLURM_JOB_ID="901", SLURM_JOB_GPUS="")
            self.assertEqual((r.returncode, r.stderr), (0, ""), mode)
        self.assert_code(base.grpc.StatusCode.NOT_FOUND, self.stub.GetJob, base.pb.GetJobRequest(id="901"))
        # Accounting never fails the job: with the daemon gone the prolog logs why and exits 0.
        self.daemon.stop()
        r = run("prolog", **dict(slurm, SLURM_JOB_ID="902"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("job 902 not accounted", r.stderr)
        # A hostile job id cannot split or forge the log line: one line, its controls as '?'.
        r = run("prolog", **dict(slurm, SLURM_JOB_ID="903\nhipstack-slurm-job: job 1 stopped\x1b[2J"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertIn("job 903?hipstack-slurm-job: job 1 stopped?[2J not accounted", r.stderr)
        self.assertEqual(run("neither").returncode, 2)

    def test_an_admin_start_is_not_held_up_by_a_flood_of_reads(self):
        """Issue 40: readers shared the admin's one-thread queue; with 11.8k jobs stored, 40 clients
        looping ListJobs(limit=1000) made 4 of 5 `job start` calls fail after 5 s, and the daemon
        started those jobs anyway. Now starts have a queue of their own, reads a connection of their
        own and at most 4 calls per client, and a start its client gave up on is not carried out."""
        self.start_jobs()
        self.stub.StartJob(base.pb.StartJobRequest(id="seed", devices=["0"]), timeout=10)
        self.stub.StopJob(base.pb.StopJobRequest(id="seed"), timeout=10)
        self.daemon.stop()
        # 12,000 stopped jobs, copied from the seed in the file itself (the schema is docs/jobs.md's).
        with sqlite3.connect(self.db) as db:
            db.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 12000) "
                       "INSERT INTO jobs (id, user, started_by, stopped_by, started_ns, stopped_ns) "
                       "SELECT 'old-' || i, user, started_by, stopped_by, started_ns + i, stopped_ns + i FROM jobs, n WHERE id = 'seed'")
            db.execute("INSERT INTO job_gpus (job_id, position, uuid, bdf, usage) "
                       "SELECT j.id, g.position, g.uuid, g.bdf, g.usage FROM jobs j, job_gpus g WHERE j.id LIKE 'old-%' AND g.job_id = 'seed'")
        self.start_jobs()
        stop = threading.Event()
        answers = {"OK": 0, "RESOURCE_EXHAUSTED": 0, "other": []}
        lock = threading.Lock()

        def reader():
            channel = base.grpc.insecure_channel(self.daemon.target)
            stub = base.rpc.MonitorStub(channel)
            while not stop.is_set():
                try:
                    stub.ListJobs(base.pb.ListJobsRequest(limit=1000), timeout=30)
                    code = "OK"
                except base.grpc.RpcError as e:
                    code = e.code().name
                with lock:
                    if code in answers:
                        answers[code] += 1
                    else:
                        answers["other"].append(code)
                if code == "RESOURCE_EXHAUSTED":
                    time.sleep(0.01)
            channel.close()
        threads = [threading.Thread(target=reader) for _ in range(40)]
        for t in threads:
            t.start()
        try:
            deadline = time.monotonic() + 60
            while answers["OK"] < 2:
                self.assertLess(time.monotonic(), deadline, "no two ListJobs answered within 60 s: %r" % answers)
                time.sleep(0.05)
            timings = []
            for n in range(5):
                began = time.monotonic()
                # The bound: within 1 s (before the fix: 2.1-2.6 s with 12,000 jobs here, and
                # over 5 s with 11.8k jobs of 8 GPUs).
                job = self.stub.StartJob(base.pb.StartJobRequest(id="flood-%d" % n, devices=["0"]), timeout=1)
                timings.append(time.monotonic() - began)
                self.assertTrue(job.running and not job.already_running)
                self.stub.StopJob(base.pb.StopJobRequest(id="flood-%d" % n), timeout=5)
            print("admin StartJob under a 40-client ListJobs flood (12,000 jobs stored): %s s; reads: %r"
                  % (", ".join("%.3f" % t for t in timings), answers), file=sys.stderr)
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=60)
        self.assertEqual(answers["other"], [])
        self.assertGreater(answers["RESOURCE_EXHAUSTED"], 0, "the per-client limit never refused a read")
        # A page is at most 1 MiB whatever the limit asks: the rest is said to be there.
        page = self.stub.ListJobs(base.pb.ListJobsRequest(limit=1000), timeout=30)
        self.assertLessEqual(page.ByteSize(), 1024 * 1024 + 64 * 1024)
        self.assertTrue(page.truncated)
        # A start retried (its first answer lost) is the running job, not an error; another GPU set is refused.
        first = self.stub.StartJob(base.pb.StartJobRequest(id="retried", devices=["0"], user="bob"), timeout=5)
        again = self.stub.StartJob(base.pb.StartJobRequest(id="retried", devices=["0"], user="bob"), timeout=5)
        self.assertEqual((again.running, again.already_running, again.started_unix_ms), (True, True, first.started_unix_ms))
        self.assert_code(base.grpc.StatusCode.ALREADY_EXISTS, self.stub.StartJob,
                         base.pb.StartJobRequest(id="retried", devices=["0"], user="eve"), contains="another user")

    def test_a_full_disk_stops_jobs_all_the_same(self):
        """Issue 40: on a full disk a failed stop left the job running forever (1,024 such jobs block
        every start), and each running job logged every look. The daemon runs in a mount namespace
        of its own with its job store on a 200 KB tmpfs (needs root, as CI runs)."""
        disk = os.path.join(self.state, "disk")
        os.mkdir(disk, 0o750)
        libc = ctypes.CDLL(None, use_errno=True)
        clone_newns, ms_rec, ms_private = 0x00020000, 0x4000, 0x40000

        def small_tmpfs():  # in the daemon's process, before it starts
            if libc.unshare(clone_newns) != 0 or libc.mount(b"none", b"/", None, ms_rec | ms_private, None) != 0 or \
                    libc.mount(b"tmpfs", disk.encode(), b"tmpfs", 0, b"size=200k,mode=0750") != 0:
                raise OSError(ctypes.get_errno(), "a tmpfs for the job store")
        self.start("job_db = %s/jobs.db\njob_save_interval_s = 1\n" % disk, sysfs=self.root, preexec=small_tmpfs)
        started = 0
        for i in range(1, 500):
            r = self.smi("job", "start", "--id", "j%d" % i)
            if r.returncode != 0:
                break
            started = i
        self.assertIn("database or disk is full", r.stderr)
        self.assertGreater(started, 0)
        stopped = self.smi("job", "stop", "--id", "j1", "--json")
        self.assertEqual(stopped.returncode, 0, stopped.stderr)
        self.assertFalse(json.loads(stopped.stdout)["job"]["running"])
        self.assertFalse(self.stub.GetJob(base.pb.GetJobRequest(id="j1")).running)
        self.assertIn("job j1 stopped, but its record is not written yet", self.daemon.stderr())
        # Grown: the stop is written, and jobs start again.
        subprocess.run(["nsenter", "-t", str(self.daemon.proc.pid), "-m", "mount", "-o", "remount,size=4m", disk], check=True)
        deadline = time.monotonic() + 15
        while "job j1: its stop is written now" not in self.daemon.stderr():
            self.assertLess(time.monotonic(), deadline, self.daemon.stderr())
            time.sleep(0.05)
        self.assertEqual(self.smi("job", "start", "--id", "after").returncode, 0)
        # One line when the running jobs' writes began failing, not one per job and look.
        self.assertLessEqual(self.daemon.stderr().count("running job(s) could not be written"), 2, self.daemon.stderr())
        print("a 200 KB job store took %d job(s) before it was full" % started)

    def test_without_a_usable_store_the_daemon_runs_and_says_why(self):
        unavailable = base.grpc.StatusCode.UNAVAILABLE
        self.start("", sysfs=self.root)
        self.assert_code(unavailable, self.stub.GetJob, base.pb.GetJobRequest(id="1"), contains="job_db = off")
        r = self.smi("job", "list")
        self.assertEqual(r.returncode, 4, r.stderr)
        self.daemon.stop()
        self.start("job_db = %s/missing-folder/jobs.db\n" % self.state, sysfs=self.root)
        self.assert_code(unavailable, self.stub.StartJob, base.pb.StartJobRequest(id="1"), contains="cannot open")
        self.daemon.stop()
        with sqlite3.connect(self.db) as db:
            db.execute("PRAGMA user_version = 99")
        self.start_jobs()
        self.assert_code(unavailable, self.stub.GetJob, base.pb.GetJobRequest(id="1"), contains="schema version 99")
        with sqlite3.connect(self.db) as db:
            self.assertEqual(db.execute("PRAGMA user_version").fetchone()[0], 99)


def main():
    def setup(stubs, _own):
        global STUBS
        STUBS = stubs
    base.run_as_root(setup)


if __name__ == "__main__":
    main()
