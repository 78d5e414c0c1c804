"""HTTP helpers the hipstack-smid tests share: plain and raw requests to 127.0.0.1, waiting for
/readyz (a bounded poll, never a fixed sleep), and parsing a /metrics page into samples."""
import http.client
import re
import socket
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
