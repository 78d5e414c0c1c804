#!/usr/bin/python3
"""The soak (issue 44, docs/performance.md "Soak"): hipstack-smid run long under everything a busy
node does to it, its RSS, descriptors, threads and CPU sampled every 10 s and plotted.

One daemon reads the 8-GPU MI300X capture, whose firmware tables move as running GPUs' do (every
10 ms, tests/lib/moving_firmware.py), and the fake NVML's two H100s (2 GPUs more), sampling every
--sample-ms (10 ms: 100x the shipped 1 s). Meanwhile: a real Prometheus scrapes /metrics every
second; a WatchMetrics stream reads every sample; a job is started and stopped every minute
(hipstack-smi job start/stop); attribution asks a fake kubelet every second; the configuration is
reloaded (SIGHUP) every 5 minutes; a client connects to HTTP and to gRPC and drops every second.

Pass: after the warm-up, RSS grows by under 1 MB (median of the last five figures against the first
five), descriptors and threads stay within 2 of where they were, and Prometheus saw every scrape
succeed (min_over_time(up) = 1, at least 90 % of the scrapes a 1 s interval makes). Writes
soak.csv (the figures), soak.png (the plot) and soak.txt (the verdict) into --out.

Usage: bench/soak.py --build BUILD_DIR [--minutes 60] [--out DIR] [--sample-ms 10]
Needs /usr/bin/python3 with grpcio, grpc_tools and matplotlib, and prometheus (scripts/deps.sh test).
"""
import argparse
import glob
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path.insert(0, os.path.join(ROOT, "monitor-daemon", "tests"))
from moving_firmware import MovingFirmware  # noqa: E402
from smid_http import monitor_stubs  # noqa: E402

CAPTURE = os.path.join(ROOT, "captures", "constructed", "mi300x-8gpu-spx-nps1", "sys")
PROTO = os.path.join(ROOT, "wire", "proto")
KUBELET_PROTO = os.path.join(ROOT, "monitor-daemon", "proto")
TICKS = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def figures(pid):
    """RSS (kB), descriptors, threads and CPU seconds of a process, from /proc."""
    with open("/proc/%d/status" % pid) as f:
        status = dict(line.split(":", 1) for line in f if ":" in line)
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return {"rss_kb": int(status["VmRSS"].split()[0]), "fds": len(os.listdir("/proc/%d/fd" % pid)),
            "threads": int(status["Threads"]), "cpu_s": (int(fields[11]) + int(fields[12])) / TICKS}


def daemon_pid(pid):
    """The daemon's own process: pid itself, or under a wrapper (--wrap) the descendant that is hipstack-smid."""
    with open("/proc/%d/comm" % pid) as f:
        if f.read().strip() == "hipstack-smid":
            return pid
    with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
        children = [int(c) for c in f.read().split()]
    for child in children:
        try:
            return daemon_pid(child)
        except (OSError, SystemExit):
            continue
    raise SystemExit("soak: no hipstack-smid under process %d" % pid)


def wait_for(what, predicate, timeout, alive=lambda: True):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline or not alive():
            raise SystemExit("soak: %s did not happen within %.0f s" % (what, timeout))
        time.sleep(0.05)


class Soak:
    def __init__(self, args):
        self.args = args
        self.work = tempfile.mkdtemp(prefix="smid-soak-")
        self.stop = threading.Event()
        self.problems = []
        self.counts = {"streamed": 0, "jobs": 0, "reloads": 0, "drops": 0}
        self.procs = []

    def fail(self, text):
        self.problems.append(text)

    def spawn(self, argv, log, env=None):
        out = open(os.path.join(self.work, log), "w")
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env)
        self.procs.append(p)
        return p

    def log(self, name):
        with open(os.path.join(self.work, name), errors="replace") as f:
            return f.read()

    def start(self):
        build = self.args.build
        root = os.path.join(self.work, "sys")
        subprocess.run(["cp", "-a", CAPTURE, root], check=True)
        self.firmware = [MovingFirmware(p, gfx_percent=60, mem_percent=20, pcie_gbps=3, xgmi_kb=1000)
                         for p in sorted(glob.glob(os.path.join(root, "class/drm/card*/device/gpu_metrics")))]
        for m in self.firmware:
            m.__enter__()
        # The fake kubelet: one pod holding GPU 0.
        state = os.path.join(self.work, "kubelet.json")
        with open(state, "w") as f:
            json.dump({"get": "ok", "pods": [{"name": "trainer-0", "namespace": "ml", "containers": [
                {"name": "worker", "devices": [{"resource": "amd.com/gpu", "ids": ["0000:05:00.0"]}]}]}]}, f)
        self.kubelet_socket = os.path.join(self.work, "kubelet.sock")
        self.spawn(["/usr/bin/python3", os.path.join(ROOT, "monitor-daemon", "tests", "fake_kubelet.py"), KUBELET_PROTO,
                    self.kubelet_socket, state, os.path.join(self.work, "kubelet.calls")], "kubelet.log")
        wait_for("the fake kubelet's socket", lambda: os.path.exists(self.kubelet_socket), 20)
        self.socket = os.path.join(self.work, "smid.sock")
        self.config = os.path.join(self.work, "smid.conf")
        self.write_config(0)
        env = dict(os.environ, HIPSTACK_NVML_LIBRARY=os.path.join(build, "smi-lib/tests/fake_nvml/full/libnvidia-ml.so.1"),
                   HIPSTACK_FAKE_NVML_SCRIPT=os.path.join(ROOT, "smi-lib/tests/fake_nvml/scripts/h100x2-mig.txt"))
        wrap = self.args.wrap.split() if self.args.wrap else []
        self.smid = self.spawn(wrap + [os.path.join(build, "monitor-daemon/hipstack-smid"), "--config", self.config, "--sysfs-root", root,
                                "--listen", "127.0.0.1:0", "--grpc-listen", "unix:" + self.socket], "smid.log", env)
        alive = lambda: self.smid.poll() is None  # noqa: E731
        wait_for("hipstack-smid listening", lambda: "(port " in self.log("smid.log") and os.path.exists(self.socket), 30, alive)
        self.port = int(self.log("smid.log").split("(port ", 1)[1].split(")", 1)[0])
        self.smid_pid = daemon_pid(self.smid.pid)
        wait_for("/readyz", self.ready, 60, alive)
        self.start_prometheus()

    def write_config(self, generation):
        with open(self.config + ".new", "w") as f:
            f.write("dbus = off\nfast_interval_ms = %d\nslow_interval_ms = 1000\ncostly_interval_ms = 1000\n"
                    "window_interval_ms = 1000\nhistory_length = 600\nattribution = on\nkubelet_socket = %s\n"
                    "attribution_interval_ms = 1000\njob_db = %s\nerror_db = %s\n# reload %d\n"
                    % (self.args.sample_ms, self.kubelet_socket, os.path.join(self.work, "jobs.db"),
                       os.path.join(self.work, "errors.db"), generation))
        os.replace(self.config + ".new", self.config)

    def ready(self):
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/readyz" % self.port, timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def start_prometheus(self):
        config = os.path.join(self.work, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global: {scrape_interval: 1s, scrape_timeout: 1s}\nscrape_configs:\n  - job_name: hipstack-smid\n"
                    "    static_configs: [{targets: ['127.0.0.1:%d']}]\n" % self.port)
        port = free_port()
        self.prometheus_url = "http://127.0.0.1:%d" % port
        self.spawn(["prometheus", "--config.file=" + config, "--storage.tsdb.path=" + os.path.join(self.work, "tsdb"),
                    "--web.listen-address=127.0.0.1:%d" % port], "prometheus.log")
        wait_for("prometheus ready", lambda: "Server is ready to receive web requests" in self.log("prometheus.log"), 30)

    def query(self, q):
        url = "%s/api/v1/query?query=%s" % (self.prometheus_url, urllib.parse.quote(q))
        with urllib.request.urlopen(url, timeout=10) as r:
            result = json.load(r)["data"]["result"]
        return float(result[0]["value"][1]) if result else None

    # The load, one thread each.
    def every(self, seconds, action):
        def loop():
            while not self.stop.wait(seconds):
                try:
                    action()
                except Exception as e:  # noqa: BLE001 - a load step that fails is a finding, not a crash
                    self.fail("%s: %s" % (action.__name__, e))
        t = threading.Thread(target=loop, daemon=True)
        t.start()
        return t

    def watch_metrics(self, pb, rpc, grpc):
        channel = grpc.insecure_channel("unix://" + self.socket)
        stream = rpc.MonitorStub(channel).WatchMetrics(pb.WatchMetricsRequest(interval_ms=100))
        self.stop_stream = stream.cancel
        try:
            for _ in stream:
                self.counts["streamed"] += 1
        except grpc.RpcError as e:
            if not self.stop.is_set():
                self.fail("the WatchMetrics stream ended: %s" % e)

    def job(self):
        smi = os.path.join(self.args.build, "smi-cli/hipstack-smi")
        env = dict(os.environ, HIPSTACK_SMID_SOCKET=self.socket)
        n = self.counts["jobs"]
        if n > 0:
            subprocess.run([smi, "job", "stop", "--id", "soak-%d" % (n - 1)], env=env, check=True, capture_output=True, timeout=30)
        subprocess.run([smi, "job", "start", "--id", "soak-%d" % n], env=env, check=True, capture_output=True, timeout=30)
        self.counts["jobs"] += 1

    def reload(self):
        self.counts["reloads"] += 1
        self.write_config(self.counts["reloads"])
        os.kill(self.smid_pid, signal.SIGHUP)

    def drop(self, grpc):
        with socket.create_connection(("127.0.0.1", self.port), timeout=5):
            pass
        channel = grpc.insecure_channel("unix://" + self.socket)
        grpc.channel_ready_future(channel).result(timeout=5)
        channel.close()
        self.counts["drops"] += 1

    def run(self):
        stubs = os.path.join(self.work, "stubs")
        os.makedirs(stubs)
        pb, rpc = monitor_stubs(PROTO, stubs)
        import grpc
        threading.Thread(target=self.watch_metrics, args=(pb, rpc, grpc), daemon=True).start()
        self.every(60, self.job)
        self.every(300, self.reload)
        self.every(1, lambda: self.drop(grpc))
        rows, began = [], time.monotonic()
        end = began + 60 * self.args.minutes
        while time.monotonic() < end and self.smid.poll() is None:
            row = figures(self.smid_pid)
            row["t_s"] = round(time.monotonic() - began, 1)
            rows.append(row)
            time.sleep(max(0.0, min(10.0, end - time.monotonic())))
        self.stop.set()
        self.stop_stream()
        return rows, time.monotonic() - began

    def close(self):
        for m in getattr(self, "firmware", []):
            m.__exit__(None, None, None)
        if getattr(self, "smid_pid", None) not in (None, self.smid.pid):
            os.kill(self.smid_pid, signal.SIGTERM)  # under a wrapper: the daemon itself ends, the wrapper follows
            self.smid.wait(timeout=300)
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        shutil.rmtree(self.work, True)


def judge(soak, rows, seconds, warmup_s):
    after = [r for r in rows if r["t_s"] >= warmup_s]
    if len(after) < 10:
        soak.fail("only %d figures after the warm-up: run longer" % len(after))
        return {}
    first, last = after[:5], after[-5:]
    growth_kb = statistics.median(r["rss_kb"] for r in last) - statistics.median(r["rss_kb"] for r in first)
    spread = {k: max(r[k] for r in after) - min(r[k] for r in after) for k in ("fds", "threads")}
    cpu = (rows[-1]["cpu_s"] - after[0]["cpu_s"]) / max(1e-9, rows[-1]["t_s"] - after[0]["t_s"]) * 100
    window = int(seconds)
    up_min = soak.query("min_over_time(up[%ds])" % window)
    scrapes = soak.query("count_over_time(up[%ds])" % window)
    failed = soak.query("sum_over_time((up == 0)[%ds:1s])" % window) or 0
    figures_ = {"rss_growth_kb": growth_kb, "fds_spread": spread["fds"], "threads_spread": spread["threads"],
                "cpu_percent": round(cpu, 2), "scrapes": scrapes, "up_min": up_min, "failed_scrapes": failed}
    if growth_kb >= 1024:
        soak.fail("RSS grew by %d kB after the warm-up (limit 1024)" % growth_kb)
    for k, v in spread.items():
        if v > 2:
            soak.fail("%s moved by %d after the warm-up (limit 2)" % (k, v))
    if up_min != 1 or failed:
        soak.fail("Prometheus saw a failed scrape (min up %s, %s failed)" % (up_min, failed))
    if scrapes is None or scrapes < 0.9 * window:
        soak.fail("Prometheus scraped %s times in %d s (expected about one a second)" % (scrapes, window))
    return figures_


def plot(rows, warmup_s, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t = [r["t_s"] / 60 for r in rows]
    cpu = [0.0] + [100 * (b["cpu_s"] - a["cpu_s"]) / max(1e-9, b["t_s"] - a["t_s"]) for a, b in zip(rows, rows[1:])]
    panels = [("RSS (MB)", [r["rss_kb"] / 1024 for r in rows]), ("file descriptors", [r["fds"] for r in rows]),
              ("threads", [r["threads"] for r in rows]), ("CPU (% of a core, per 10 s)", cpu)]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 9), sharex=True)
    for ax, (label, values) in zip(axes, panels):
        ax.plot(t, values, linewidth=1)
        ax.axvline(warmup_s / 60, color="grey", linestyle="--", linewidth=0.8)
        ax.set_ylabel(label)
        ax.grid(True, linewidth=0.3)
    axes[-1].set_xlabel("minutes (dashed: end of the warm-up)")
    fig.suptitle("hipstack-smid soak: 10 GPUs sampled every 10 ms, scraped every second")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", required=True, help="a build tree (hipstack-smid, hipstack-smi, the fake NVML)")
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--out", default=os.path.join(ROOT, "out", "soak"))
    parser.add_argument("--sample-ms", type=int, default=10)
    parser.add_argument("--wrap", help="a command the daemon runs under, e.g. 'heaptrack -o FILE' (its figures are the daemon's own)")
    args = parser.parse_args()
    args.build = os.path.abspath(args.build)
    os.makedirs(args.out, exist_ok=True)
    warmup_s = min(600.0, 60 * args.minutes / 5)
    soak = Soak(args)
    try:
        soak.start()
        rows, seconds = soak.run()
        if soak.smid.poll() is not None:
            soak.fail("hipstack-smid exited (%s):\n%s" % (soak.smid.returncode, soak.log("smid.log")[-2000:]))
        figures_ = judge(soak, rows, seconds, warmup_s) if rows else {}
    finally:
        soak.close()
    with open(os.path.join(args.out, "soak.csv"), "w") as f:
        f.write("t_s,rss_kb,fds,threads,cpu_s\n")
        for r in rows:
            f.write("%s,%d,%d,%d,%.2f\n" % (r["t_s"], r["rss_kb"], r["fds"], r["threads"], r["cpu_s"]))
    plot(rows, warmup_s, os.path.join(args.out, "soak.png"))
    verdict = "PASS" if not soak.problems else "FAIL"
    text = ("soak %s: %.1f min, sampling every %d ms, warm-up %.0f s\n%s\nload: %s\n%s"
            % (verdict, seconds / 60, args.sample_ms, warmup_s, json.dumps(figures_), json.dumps(soak.counts),
               "".join("problem: %s\n" % p for p in soak.problems)))
    with open(os.path.join(args.out, "soak.txt"), "w") as f:
        f.write(text)
    print(text, end="")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
