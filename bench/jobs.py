#!/usr/bin/python3
"""What job accounting costs (docs/performance.md, "Job accounting"): two hipstack-smid on copies of
the 8-GPU MI300X capture, both with a job store; one accounts a job on all 8 GPUs, the other none.
Side by side for SECONDS at FAST_MS between live samples. Prints each daemon's CPU time and RSS,
the samples counted, the job store's size, and the ratios.

Usage: bench/jobs.py BUILD_DIR [SECONDS] [FAST_MS]
  BUILD_DIR  a build tree (monitor-daemon/hipstack-smid, smi-cli/hipstack-smi)
  SECONDS    measured time after both are ready (default 60)
  FAST_MS    fast_interval_ms of both (default 1000, the packaged configuration's)
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
SPX = os.path.join(REPO, "captures", "constructed", "mi300x-8gpu-spx-nps1", "sys")


def main():
    build = os.path.abspath(sys.argv[1])
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 60
    fast_ms = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    smid = os.path.join(build, "monitor-daemon", "hipstack-smid")
    smi = os.path.join(build, "smi-cli", "hipstack-smi")
    work = tempfile.mkdtemp(prefix="bench-jobs-")
    procs = []
    try:
        daemons = {}
        for name in ("job", "idle"):
            folder = os.path.join(work, name)
            os.makedirs(folder)
            shutil.copytree(SPX, os.path.join(folder, "sys"))
            config = os.path.join(folder, "smid.conf")
            with open(config, "w") as f:
                f.write("dbus = off\nfast_interval_ms = %d\njob_db = %s/jobs.db\n" % (fast_ms, folder))
            log = os.path.join(folder, "smid.err")
            proc = subprocess.Popen([smid, "--config", config, "--sysfs-root", os.path.join(folder, "sys"), "--http-listen",
                                     "127.0.0.1:0", "--grpc-listen", "unix:%s/smid.sock" % folder],
                                    stdout=subprocess.DEVNULL, stderr=open(log, "w"))
            procs.append(proc)
            daemons[name] = (proc, port_of(log, proc), folder)
        for name, (proc, port, _) in daemons.items():
            deadline = time.monotonic() + 60
            while get(port, "/readyz")[0] != 200:
                if time.monotonic() > deadline:
                    sys.exit("daemon %s not ready" % name)
                time.sleep(0.1)
        folder = daemons["job"][2]
        env = dict(os.environ, HIPSTACK_SMID_SOCKET=os.path.join(folder, "smid.sock"))
        subprocess.run([smi, "job", "start", "--id", "bench"], env=env, check=True, capture_output=True)
        start = {name: cpu_seconds(p.pid) for name, (p, _, _) in daemons.items()}
        time.sleep(seconds)  # the measured time: both daemons sample on their own
        cpu = {name: cpu_seconds(p.pid) - start[name] for name, (p, _, _) in daemons.items()}
        rss = {name: rss_mib(p.pid) for name, (p, _, _) in daemons.items()}
        shown = json.loads(subprocess.run([smi, "job", "show", "bench", "--json"], env=env, check=True, capture_output=True,
                                          text=True).stdout)
        samples = sum(next(f["value"] for f in g["figures"] if f["name"] == "samples") for g in shown["job"]["gpus"])
        store = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder) if f.startswith("jobs.db"))
        print("job accounting cost, %d s, 8 MI300X GPUs, a live sample every %d ms, one job on all 8 GPUs" % (seconds, fast_ms))
        print("%-5s %10s %10s %10s" % ("", "CPU s", "CPU %core", "RSS MiB"))
        for name in ("job", "idle"):
            print("%-5s %10.2f %10.2f %10.1f" % (name, cpu[name], 100 * cpu[name] / seconds, rss[name]))
        extra = cpu["job"] - cpu["idle"]
        print("ratio job/idle: CPU %.2fx, RSS %.2fx; %d GPU samples counted (%.0f us CPU each, written through); "
              "job store %.0f KiB (database and WAL)"
              % (cpu["job"] / max(cpu["idle"], 1e-9), rss["job"] / rss["idle"], samples, 1e6 * extra / max(1, samples), store / 1024))
    finally:
        stop_all(procs, work)


if __name__ == "__main__":
    main()
