"""HTTP helpers the hipstack-smid tests share: plain and raw requests to 127.0.0.1, waiting for
/readyz (a bounded poll, never a fixed sleep), and parsing a /metrics page into samples."""
import http.client
import os
import re
import signal
import socket
import subprocess
import time

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')


def http_get(port, path, method="GET", timeout=5.0):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode()
    finally:
        conn.close()


def raw_request(port, data, timeout=5.0):
    """Sends raw bytes, returns everything the daemon answers until it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        chunks = []
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks).decode(errors="replace")


def daemon_log(path):
    """A new, empty file for a daemon's stderr that the test also reads. Opened for appending: the
    daemon shares this open file (and its offset) with the test, so without O_APPEND a line written
    after the test's seek(0) would overwrite the start of the log."""
    open(path, "w").close()
    return open(path, "a+")


def wait_ready(port, timeout=10.0, alive=None, log=lambda: ""):
    """Returns once /readyz answers 200 (every GPU has a first sample); fails after `timeout` s, or
    at once when `alive()` says the daemon exited. `log()` is added to the failure message."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if alive is not None and not alive():
            raise AssertionError("hipstack-smid exited before /readyz answered 200:\n" + log())
        status, _, _ = http_get(port, "/readyz")
        if status == 200:
            return
        time.sleep(0.05)
    raise AssertionError("/readyz did not become 200 within %.0f s:\n%s" % (timeout, log()))


def start_smid(test, smid, capture, folder, grpc_listen=None, config="", ready=True):
    """Starts hipstack-smid on `capture` (HTTP on 127.0.0.1 port 0; gRPC on `grpc_listen`, or a unix
    socket in `folder`), stopped by PID at the test's cleanup; returns its --host address once
    /readyz says every GPU has its first sample (or once it listens, when not `ready`). Costly
    metrics are read with every sample: energy_consumed is then the exact counter a local command
    reads, not the estimate between reads (test_costly.py)."""
    name = "smid-%d" % len(os.listdir(folder))
    socket_path = os.path.join(folder, name + ".sock")
    log = daemon_log(os.path.join(folder, name + ".err"))
    test.addCleanup(log.close)
    config_path = os.path.join(folder, name + ".conf")
    with open(config_path, "w") as f:
        f.write("costly_interval_ms = 1000\n" + config)
    proc = subprocess.Popen([smid, "--config", config_path, "--sysfs-root", capture, "--http-listen", "127.0.0.1:0",
                             "--grpc-listen", grpc_listen or "unix:" + socket_path],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)

    def stop():
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)
    test.addCleanup(stop)

    def text():
        log.seek(0)
        return log.read()
    deadline = time.monotonic() + 10
    while True:
        grpc = re.search(r"gRPC on (\S+) \(", text())
        http_port = re.search(r"hipstack-smid: listening on \S+ \(port (\d+)\)", text())
        if grpc and http_port:
            break
        test.assertIsNone(proc.poll(), "hipstack-smid exited:\n" + text())
        test.assertLess(time.monotonic(), deadline, "no gRPC or HTTP listener:\n" + text())
        time.sleep(0.05)
    if ready:
        wait_ready(int(http_port.group(1)), 20, alive=lambda: proc.poll() is None, log=text)
    return "unix://" + socket_path if grpc_listen is None else grpc.group(1)


def unescape(value):
    return re.sub(r'\\(.)', lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), value)


def parse_metrics(body):
    """[(name, {label: value}, float)] of every sample line."""
    out = []
    for line in body.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            raise AssertionError("malformed sample line: %r" % line)
        labels = {k: unescape(v) for k, v in LABEL.findall(m.group(2) or "")}
        out.append((m.group(1), labels, float(m.group(3))))
    return out


def series(samples, name, **labels):
    return [(l, v) for n, l, v in samples if n == name and all(l.get(k) == w for k, w in labels.items())]


def monitor_stubs(proto_dir, out):
    """Generates the Python modules of hipstack.monitor.v1 (monitor.proto, local.proto) into `out`
    and puts it on sys.path; returns (monitor_pb2, monitor_pb2_grpc)."""
    import sys
    from grpc_tools import protoc
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    if not os.path.isdir(include):
        include = "/usr/include"  # Debian: the well-known types live with libprotobuf-dev
    for name in ("hipstack/monitor/v1/monitor.proto", "hipstack/monitor/v1/local.proto"):
        if protoc.main(["protoc", "-I" + proto_dir, "-I" + include, "--python_out=" + out, "--grpc_python_out=" + out, name]) != 0:
            raise RuntimeError("protoc failed on " + name)
    sys.path.insert(0, out)
    from hipstack.monitor.v1 import monitor_pb2, monitor_pb2_grpc
    return monitor_pb2, monitor_pb2_grpc
