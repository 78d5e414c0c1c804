#!/usr/bin/python3
"""What attribution costs (docs/performance.md, "Attribution"): two hipstack-smid on the same copied
8-GPU MI300X CPX capture (64 partitions, processes in Kubernetes cgroups), one with attribution on
(a fake kubelet listing POD_COUNT pods that hold every partition, a look every INTERVAL_MS), one with
it off, side by side for SECONDS. Prints each daemon's CPU time and RSS, the /metrics page of each,
the families attribution adds, and the ratios on/off.

Usage: bench/attribution.py BUILD_DIR [SECONDS] [INTERVAL_MS] [--live-proc]
  BUILD_DIR  a build tree (monitor-daemon/hipstack-smid)
  SECONDS    measured time after both are ready (default 60)
  INTERVAL_MS attribution_interval_ms of the daemon with attribution (default 1000: ten times the
             default's rate, to show the cost of a look)
  --live-proc both daemons read this machine's /proc instead of the capture's few processes: the
             scan of every process's open files as on a busy node (none of them holds these GPUs)
Processes are stopped by PID and the temporary folder removed on exit.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from smid_proc import cpu_seconds, get, port_of, rss_mib, stop_all

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPX = os.path.join(REPO, "captures", "constructed", "mi300x-8gpu-cpx-nps1")


def main():
    live_proc = "--live-proc" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--live-proc"]
    build = os.path.abspath(args[0])
    seconds = float(args[1]) if len(args) > 1 else 60
    interval = int(args[2]) if len(args) > 2 else 1000
    smid = os.path.join(build, "monitor-daemon", "hipstack-smid")
    work = tempfile.mkdtemp(prefix="bench-attribution-")
    procs = []
    try:
        capture = os.path.join(work, "capture")
        shutil.copytree(CPX, capture)
        logs = os.path.join(work, "log")
        pods = []
        for pid in sorted(os.listdir(os.path.join(capture, "proc"))):
            uid = "%08x-0000-4000-8000-%012x" % (int(pid), int(pid))
            cid = ("%064x" % int(pid))
            with open(os.path.join(capture, "proc", pid, "cgroup"), "w") as f:
                f.write("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice/cri-containerd-%s.scope\n"
                        % (uid.replace("-", "_"), cid))
            os.makedirs(os.path.join(logs, "pods", "bench_p%s_%s" % (pid, uid)))
            os.makedirs(os.path.join(logs, "containers"), exist_ok=True)
            open(os.path.join(logs, "containers", "p%s_bench_c-%s.log" % (pid, cid)), "w").close()
        # Every partition held by a pod of its own: amdgpu_xcp_N platform devices as on a live node.
        listing = json.loads(subprocess.run([os.path.join(build, "smi-cli", "hipstack-smi"), "--sysfs-root",
                                             os.path.join(capture, "sys"), "--json", "partition"],
                                            capture_output=True, text=True, check=True).stdout)
        xcp = 0
        for gpu in listing["devices"]:
            for p in gpu["partition_list"]:
                if p["index"] == 0:
                    ident = gpu["bdf"]
                else:
                    ident = "amdgpu_xcp_%d" % xcp
                    os.makedirs(os.path.join(capture, "sys", "devices", "platform", ident, "drm",
                                             "renderD%d" % p["metrics"]["partition_render_minor"]["value"]))
                    xcp += 1
                pods.append({"name": "job-%d-%d" % (gpu["index"], p["index"]), "namespace": "bench",
                             "containers": [{"name": "main", "devices": [{"resource": "amd.com/gpu", "ids": [ident]}]}]})
        state = os.path.join(work, "kubelet.json")
        with open(state, "w") as f:
            json.dump({"pods": pods}, f)
        socket = os.path.join(work, "kubelet.sock")
        kubelet = subprocess.Popen([sys.executable, os.path.join(REPO, "monitor-daemon", "tests", "fake_kubelet.py"),
                                    os.path.join(REPO, "monitor-daemon", "proto"), socket, state, os.path.join(work, "calls")],
                                   stdout=subprocess.PIPE, text=True)
        procs.append(kubelet)
        assert kubelet.stdout.readline().strip() == "serving"

        daemons = {}
        for name, extra in (("on", "attribution = on\nkubelet_socket = %s\nkubelet_log_dir = %s\nattribution_interval_ms = %d\n"
                             % (socket, logs, interval)), ("off", "attribution = off\n")):
            config = os.path.join(work, name + ".conf")
            with open(config, "w") as f:
                f.write("dbus = off\ngrpc_listen = off\nprocfs_root = %s\n%s"
                        % ("/proc" if live_proc else os.path.join(capture, "proc"), extra))
            log = os.path.join(work, name + ".err")
            proc = subprocess.Popen([smid, "--config", config, "--sysfs-root", os.path.join(capture, "sys"),
                                     "--http-listen", "127.0.0.1:0"], stdout=subprocess.DEVNULL, stderr=open(log, "w"))
            procs.append(proc)
            daemons[name] = (proc, port_of(log, proc))
        for name, (proc, port) in daemons.items():
            deadline = time.monotonic() + 60
            while get(port, "/readyz")[0] != 200 or (name == "on" and "hipstack_smid_kubelet_up 1" not in get(port, "/metrics")[1]) \
                    or (name == "on" and not live_proc and "hipstack_container_gpu_processes" not in get(port, "/metrics")[1]):
                if time.monotonic() > deadline:
                    sys.exit("daemon %s not ready" % name)
                time.sleep(0.1)
        start = {name: cpu_seconds(p.pid) for name, (p, _) in daemons.items()}
        time.sleep(seconds)  # the measured time: both daemons sample on their own
        cpu = {name: cpu_seconds(p.pid) - start[name] for name, (p, _) in daemons.items()}
        rss = {name: rss_mib(p.pid) for name, (p, _) in daemons.items()}
        pages = {name: get(port, "/metrics")[1] for name, (_, port) in daemons.items()}
        added = sorted({line.split("{")[0].split(" ")[0] for line in pages["on"].splitlines()
                        if line and not line.startswith("#")} - {line.split("{")[0].split(" ")[0]
                                                                  for line in pages["off"].splitlines()
                                                                  if line and not line.startswith("#")})
        series = {name: sum(1 for l in page.splitlines() if l and not l.startswith("#")) for name, page in pages.items()}
        with open(os.path.join(work, "calls")) as f:
            calls = f.read().split()
        looks = calls.count("List")
        print("attribution cost, %d s, 8 MI300X GPUs in CPX mode (64 partitions, %d pods holding one each), a look every %d ms, %s"
              % (seconds, len(pods), interval, "this machine's /proc (%d processes)" % sum(1 for e in os.listdir("/proc") if e.isdigit())
                 if live_proc else "the capture's /proc"))
        print("%-4s %10s %10s %10s %9s" % ("", "CPU s", "CPU %core", "RSS MiB", "series"))
        for name in ("on", "off"):
            print("%-4s %10.2f %10.2f %10.1f %9d" % (name, cpu[name], 100 * cpu[name] / seconds, rss[name], series[name]))
        extra = cpu["on"] - cpu["off"]
        print("ratio on/off: CPU %.2fx, RSS %.2fx; kubelet Lists %d (%.1f ms CPU a look, kubelet call, /proc scan and match)"
              % (cpu["on"] / max(cpu["off"], 1e-9), rss["on"] / rss["off"], looks, 1000 * extra / max(1, looks)))
        print("families added: " + ", ".join(added))
    finally:
        stop_all(procs, work)


if __name__ == "__main__":
    main()
