#!/usr/bin/python3
"""hipstack-smid's mutating RPCs (SetPartition, SetPowerCap, ResetDevice) with real gRPC clients.

Usage: test_grpc_mutations.py HIPSTACK_SMID HIPSTACK_SMI CAPTURES_DIR PROTO_DIR EMULATOR [unittest args]
(EMULATOR: the amdgpu-emulator binary; its tests fail where it was not built, and the whole run exits
77 where FUSE cannot be mounted: a skip inside the run is never reported as a pass)

Who may mutate: root or the admin group on the unix socket (peer credentials), an admin client
certificate on TCP (mutual TLS); everybody else is refused on every transport and nothing is
written. Authorised changes go through the library's guarded path: on a copied capture for the
power cap, and through the amdgpu emulator (tests/emulator, a FUSE driver model) for partitions.
Needs root (it runs a client as nobody with setpriv); skipped (77) otherwise.
"""
import json
import os
import shutil
import subprocess
import tempfile
import time

import test_grpc as base

EMULATOR = None
CLIENT = r'''
import json, sys
sys.path.insert(0, sys.argv[2])
import grpc
from hipstack.monitor.v1 import monitor_pb2 as pb, monitor_pb2_grpc as rpc
stub = rpc.MonitorStub(grpc.insecure_channel("unix:" + sys.argv[1]))
out = {"devices": len(stub.ListDevices(pb.ListDevicesRequest()).devices)}
for name, call in (("SetPowerCap", lambda: stub.SetPowerCap(pb.SetPowerCapRequest(device="0", watts=500))),
                   ("SetPartition", lambda: stub.SetPartition(pb.SetPartitionRequest(device="0", compute_mode="CPX"))),
                   ("ResetDevice", lambda: stub.ResetDevice(pb.ResetDeviceRequest(device="0")))):
    try:
        call()
        out[name] = ["OK", ""]
    except grpc.RpcError as e:
        out[name] = [e.code().name, e.details()]
print(json.dumps(out))
'''


def read(path):
    with open(path) as f:
        return f.read()


def copy_capture(test, name=base.SPX):
    root = os.path.join(tempfile.mkdtemp(prefix="smid-mutate-"), "sys")
    test.addCleanup(shutil.rmtree, os.path.dirname(root), True)
    subprocess.run(["cp", "-a", base.capture(name), root], check=True)
    return root


def power_cap_file(root):
    hwmon = os.path.join(root, "class/drm/card0/device/hwmon")
    return os.path.join(hwmon, sorted(os.listdir(hwmon))[0], "power1_cap")


def make_certificates(folder):
    """A CA, a server certificate for 127.0.0.1, and client certificates CN=ops and CN=intruder."""
    def run(*args):
        subprocess.run(["openssl"] + list(args), check=True, capture_output=True, cwd=folder)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test-ca",
        "-keyout", "ca.key", "-out", "ca.pem")
    with open(os.path.join(folder, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name, extra in (("server", ["-extfile", "san.ext"]), ("ops", []), ("intruder", [])):
        run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + name, "-keyout", name + ".key", "-out", name + ".csr")
        run("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
            "-out", name + ".pem", *extra)
    return {n: os.path.join(folder, n) for n in ("ca.pem", "server.pem", "server.key", "ops.pem", "ops.key",
                                                 "intruder.pem", "intruder.key")}


class MutationTests(base.GrpcTest):
    def test_non_admin_unix_peer_is_refused_and_nothing_changes(self):
        root = copy_capture(self)
        cap, mode = power_cap_file(root), os.path.join(root, "class/drm/card0/device/current_compute_partition")
        before = (read(cap), read(mode))
        self.start("grpc_socket_group = nogroup\nadmin_group = hipstack-test-admins\n", sysfs=root)
        os.chmod(self.daemon.dir, 0o755)
        stubs = STUBS
        script = os.path.join(self.daemon.dir, "client.py")
        with open(script, "w") as f:
            f.write(CLIENT)
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", script,
                            self.daemon.socket, stubs], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        answers = json.loads(r.stdout)
        self.assertEqual(answers["devices"], 8)  # reads are open to whoever may connect
        for name in ("SetPowerCap", "SetPartition", "ResetDevice"):
            code, details = answers[name]
            self.assertEqual(code, "PERMISSION_DENIED", (name, details))
            self.assertIn("needs the admin role", details)
            self.assertNotIn("65534", details)  # the caller is not told its uid, nor the group's name
            self.assertNotIn("hipstack-test-admins", details)
        self.assertEqual((read(cap), read(mode)), before)
        self.assertIn("refused SetPowerCap 500 W on GPU 0 for uid 65534", self.daemon.stderr())

    def test_mutations_over_plaintext_tcp_are_refused(self):
        root = copy_capture(self)
        before = read(power_cap_file(root))
        stub = self.start(sysfs=root, grpc_listen="127.0.0.1:0")
        for call in (lambda: stub.SetPowerCap(base.pb.SetPowerCapRequest(device="0", watts=500)),
                     lambda: stub.ResetDevice(base.pb.ResetDeviceRequest(device="0", dry_run=True))):
            details = self.assert_code(base.grpc.StatusCode.PERMISSION_DENIED, call)
            self.assertIn("mutual TLS", details)
        self.assertEqual(read(power_cap_file(root)), before)
        # The daemon accepted the connection itself (the flood guard) and still knows the caller
        # by address, not as the descriptor it handed to gRPC.
        self.assertRegex(self.daemon.stderr(), r"refused SetPowerCap 500 W on GPU 0 for ipv4:127\.0\.0\.1:\d+ without a client certificate")

    def test_root_sets_the_power_cap(self):
        root = copy_capture(self)
        cap = power_cap_file(root)
        before = read(cap)
        stub = self.start(sysfs=root)
        dry = stub.SetPowerCap(base.pb.SetPowerCapRequest(device="0", watts=600, dry_run=True))
        self.assertEqual(dry.outcome, base.pb.MutationResponse.OUTCOME_DRY_RUN)
        self.assertEqual([(w.path.endswith("/power1_cap"), w.value) for w in dry.writes], [(True, "600000000")])
        self.assertEqual(read(cap), before)
        done = stub.SetPowerCap(base.pb.SetPowerCapRequest(device="0", watts=600))
        self.assertEqual(done.outcome, base.pb.MutationResponse.OUTCOME_APPLIED, done.message)
        self.assertEqual(read(cap).strip(), "600000000")
        log = self.daemon.stderr()
        self.assertIn("audit: for uid 0", log)
        self.assertIn("power1_cap", log)
        deadline = time.monotonic() + 10  # the daemon reloads: its facts show the new cap
        while time.monotonic() < deadline:
            facts = {r.metric: base.value_of(r) for r in stub.GetDevice(base.pb.GetDeviceRequest(device="0")).facts}
            if facts.get("power_cap") == 600.0:
                break
            time.sleep(0.1)
        self.assertEqual(facts.get("power_cap"), 600.0)

    def test_bad_mutation_requests(self):
        root = copy_capture(self)
        before = (read(power_cap_file(root)), read(os.path.join(root, "class/drm/card0/device/current_compute_partition")))
        stub = self.start(sysfs=root)
        code = base.grpc.StatusCode
        self.assert_code(code.INVALID_ARGUMENT, stub.SetPowerCap, base.pb.SetPowerCapRequest(device="0", watts=float("nan")))
        self.assert_code(code.INVALID_ARGUMENT, stub.SetPowerCap, base.pb.SetPowerCapRequest(device="0", watts=-5))
        self.assert_code(code.INVALID_ARGUMENT, stub.SetPowerCap, base.pb.SetPowerCapRequest(device="0", watts=5000),
                         contains="power")
        self.assert_code(code.INVALID_ARGUMENT, stub.SetPartition,
                         base.pb.SetPartitionRequest(device="0", compute_mode="CPX", memory_mode="NPS4"))
        self.assert_code(code.INVALID_ARGUMENT, stub.SetPartition, base.pb.SetPartitionRequest(device="0"))
        self.assert_code(code.INVALID_ARGUMENT, stub.SetPartition, base.pb.SetPartitionRequest(device="0", compute_mode="XPX"),
                         contains="XPX")
        self.assert_code(code.NOT_FOUND, stub.ResetDevice, base.pb.ResetDeviceRequest(device="GPU-nope"))
        self.assertEqual((read(power_cap_file(root)), read(os.path.join(root, "class/drm/card0/device/current_compute_partition"))),
                         before)

    def test_mutual_tls_maps_certificates_to_roles(self):
        folder = tempfile.mkdtemp(prefix="smid-tls-")
        self.addCleanup(shutil.rmtree, folder, True)
        certs = make_certificates(folder)
        root = copy_capture(self)
        config = ("tls_cert = {server.pem}\ntls_key = {server.key}\ntls_client_ca = {ca.pem}\ntls_admin_subjects = ops\n"
                  .replace("{server.pem}", certs["server.pem"]).replace("{server.key}", certs["server.key"])
                  .replace("{ca.pem}", certs["ca.pem"]))
        self.daemon = base.Daemon(self, root, config, "127.0.0.1:0")
        ca = read(certs["ca.pem"]).encode()

        def stub_for(name):
            key = read(certs[name + ".key"]).encode() if name else None
            chain = read(certs[name + ".pem"]).encode() if name else None
            channel = base.grpc.secure_channel(self.daemon.target, base.grpc.ssl_channel_credentials(ca, key, chain))
            self.addCleanup(channel.close)
            return base.rpc.MonitorStub(channel)

        request = base.pb.SetPowerCapRequest(device="0", watts=600, dry_run=True)
        self.assertEqual(stub_for("ops").SetPowerCap(request).outcome, base.pb.MutationResponse.OUTCOME_DRY_RUN)
        details = self.assert_code(base.grpc.StatusCode.PERMISSION_DENIED, stub_for("intruder").SetPowerCap, request)
        self.assertIn("admin role", details)
        self.assertNotIn("intruder", details)
        self.assertIn("CN=intruder", self.daemon.stderr())  # the log names the caller
        anonymous = stub_for(None)
        self.assertEqual(len(anonymous.ListDevices(base.pb.ListDevicesRequest()).devices), 8)
        self.assert_code(base.grpc.StatusCode.PERMISSION_DENIED, anonymous.SetPowerCap, request)
        plaintext = base.rpc.MonitorStub(base.grpc.insecure_channel(self.daemon.target))
        self.assert_code(base.grpc.StatusCode.UNAVAILABLE, plaintext.ListDevices, base.pb.ListDevicesRequest())
        # hipstack-smi --host over mutual TLS lists what it lists locally.
        remote = subprocess.run([base.SMI, "--host", self.daemon.target, "--tls-ca", certs["ca.pem"], "--tls-cert",
                                 certs["ops.pem"], "--tls-key", certs["ops.key"], "--json", "list"],
                                capture_output=True, text=True, timeout=30)
        local = subprocess.run([base.SMI, "--sysfs-root", root, "--json", "list"], capture_output=True, text=True, timeout=30)
        self.assertEqual(remote.returncode, 0, remote.stderr)
        self.assertEqual(remote.stdout, local.stdout)

    def start_emulator(self):
        """The amdgpu emulator (FUSE) over a copy of the SPX node; returns its mount point."""
        self.assertIsNotNone(EMULATOR, "the amdgpu emulator was not built (tests/emulator: libfuse3 missing at"
                             " configure time; scripts/deps.sh test installs fuse3 libfuse3-dev)")
        if not os.path.exists("/dev/fuse"):
            self.skipTest("no /dev/fuse")  # the whole run then exits 77 (main)
        work = tempfile.mkdtemp(prefix="smid-emulator-")
        self.addCleanup(shutil.rmtree, work, True)
        mount = os.path.join(work, "mnt")
        os.mkdir(mount)
        emulator = subprocess.Popen([EMULATOR, "--settle-ms", "100", os.path.join(base.CAPTURES, base.SPX),
                                     os.path.join(work, "work"), mount], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

        def stop_emulator():
            emulator.stderr.close()
            emulator.terminate()
            try:
                emulator.wait(timeout=10)
            except subprocess.TimeoutExpired:
                emulator.kill()
                subprocess.run(["fusermount3", "-u", mount], check=False)
        self.addCleanup(stop_emulator)
        deadline = time.monotonic() + 10
        while not os.path.isdir(os.path.join(mount, "sys", "class")):
            if emulator.poll() is not None:
                if emulator.returncode == 77:
                    self.skipTest("FUSE cannot be mounted here")  # the whole run then exits 77 (main)
                self.fail("amdgpu-emulator exited %d: %s" % (emulator.returncode, emulator.stderr.read()))
            self.assertLess(time.monotonic(), deadline, "the emulator did not mount")
            time.sleep(0.05)
        return mount

    def test_a_gpu_whose_reads_fail_with_eio(self):
        mount = self.start_emulator()
        stub = self.start("read_deadline_ms = 500\n", sysfs=os.path.join(mount, "sys"))
        control = os.path.join(mount, ".emulator", "control")

        def ok_readings(snapshot=None):
            """Per device, the (metric, instance) of each reading that is OK."""
            snapshot = snapshot or stub.GetMetrics(base.pb.GetMetricsRequest())
            return [sorted((r.metric, r.instance) for r in d.readings if r.status == base.pb.READING_STATUS_OK)
                    for d in snapshot.devices]

        def sampled_after(wall_ms, timeout=10):
            """The first snapshot in which every GPU has a published sample taken after wall_ms (a GPU
            whose sample runs past the read deadline shows no readings meanwhile: not a sample)."""
            deadline = time.monotonic() + timeout
            while True:
                snapshot = stub.GetMetrics(base.pb.GetMetricsRequest())
                if all(d.sampled_at_unix_ms > wall_ms for d in snapshot.devices):
                    return snapshot
                self.assertLess(time.monotonic(), deadline, "no GPU sampled after %d ms: %s" % (
                    wall_ms, [d.sampled_at_unix_ms for d in snapshot.devices]))
                time.sleep(0.05)

        healthy = ok_readings(sampled_after(0))
        switched_ms = time.time() * 1000
        with open(control, "w") as f:
            f.write("read-errors card8")
        # A sample published after the switch may have begun before it (some reads still answered);
        # the one after that began after it: samples of one GPU run one at a time.
        first = sampled_after(switched_ms)
        failing = sampled_after(max(d.sampled_at_unix_ms for d in first.devices))
        ok_now = ok_readings(failing)
        # Its process list comes from /proc (fdinfo), not from the GPU: still true, still OK.
        self.assertEqual([r for r in ok_now[1] if r[0] != "running_processes"], [],
                         "GPU 1 readings OK in a sample begun after its reads began to fail with EIO")
        self.assertEqual(ok_now[:1] + ok_now[2:], healthy[:1] + healthy[2:])
        # Down in every sample while it fails: the process list does not make it look alive (it did on
        # every other sample, whose costly reads included the process list).
        ups = [failing.devices[1].device.up]
        for _ in range(3):
            failing = sampled_after(failing.devices[1].sampled_at_unix_ms)
            ups.append(failing.devices[1].device.up)
        self.assertEqual(ups, [False] * 4)
        failed = [r for r in failing.devices[1].readings if r.status == base.pb.READING_STATUS_ERROR]
        self.assertTrue(failed)
        not_eio = [(r.metric, r.error_code, r.detail) for r in failed if "card8" in r.detail and r.error_code != 5]
        self.assertEqual(not_eio, [])  # EIO, naming the file
        with open(control, "w") as f:
            f.write("read-errors-end card8")
        deadline = time.monotonic() + 5
        while True:
            snapshot = stub.GetMetrics(base.pb.GetMetricsRequest())
            if ok_readings(snapshot) == healthy or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        for device, before in enumerate(healthy):
            now = [r for r in snapshot.devices[device].readings if r.status == base.pb.READING_STATUS_OK]
            missing = [str(r) for r in snapshot.devices[device].readings if (r.metric, r.instance) in set(before) - set(
                (r.metric, r.instance) for r in now)]
            self.assertEqual(sorted((r.metric, r.instance) for r in now), before,
                             "GPU %d after its read errors ended: OK before but not now %s" % (device, missing))

    def test_set_partition_through_the_driver_emulator(self):
        mount = self.start_emulator()
        stub = self.start(sysfs=os.path.join(mount, "sys"))
        self.assertEqual([len(d.partitions) for d in stub.GetPartitions(base.pb.GetPartitionsRequest()).devices], [1] * 8)
        # The capture has a process on GPU 0 (amdgpu_top): refused unless forced.
        self.assert_code(base.grpc.StatusCode.FAILED_PRECONDITION, stub.SetPartition,
                         base.pb.SetPartitionRequest(device="0", compute_mode="cpx"), contains="process(es) use the GPU")
        self.assertEqual([len(d.partitions) for d in stub.GetPartitions(base.pb.GetPartitionsRequest()).devices], [1] * 8)
        done = stub.SetPartition(base.pb.SetPartitionRequest(device="0", compute_mode="cpx", force=True))
        self.assertEqual(done.outcome, base.pb.MutationResponse.OUTCOME_APPLIED, done.message)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            counts = [len(d.partitions) for d in stub.GetPartitions(base.pb.GetPartitionsRequest()).devices]
            if counts == [8] + [1] * 7:
                break
            time.sleep(0.1)
        self.assertEqual(counts, [8] + [1] * 7)
        self.assertEqual(len(stub.ListDevices(base.pb.ListDevicesRequest()).devices), 8)
        pending = stub.SetPartition(base.pb.SetPartitionRequest(device="1", memory_mode="NPS4", force=True))
        self.assertEqual(pending.outcome, base.pb.MutationResponse.OUTCOME_PENDING, pending.message)
        self.assertTrue(pending.next_step)


STUBS = None


def main():
    def setup(stubs, own):
        global EMULATOR, STUBS
        STUBS = stubs
        EMULATOR = os.path.abspath(own[0]) if os.path.exists(own[0]) else None  # built with libfuse3 only
    base.run_as_root(setup, own_args=1)


if __name__ == "__main__":
    main()
