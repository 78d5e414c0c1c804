"""What the daemon benchmarks measure of a running hipstack-smid (bench/attribution.py, bench/jobs.py):
CPU time and RSS from /proc, the port it listens on (from its log), a page of its HTTP endpoint;
and their clean-up."""
import os
import re
import shutil
import signal
import sys
import time
import urllib.request

CLOCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK  # utime, stime


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) / 1024


def port_of(log_path, proc):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with open(log_path) as f:
            m = re.search(r"listening on \S+ \(port (\d+)\)", f.read())
        if m:
            return int(m.group(1))
        if proc.poll() is not None:
            sys.exit("hipstack-smid exited: see " + log_path)
        time.sleep(0.05)
    sys.exit("hipstack-smid did not listen: see " + log_path)


def get(port, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=10) as r:
        return r.status, r.read().decode()


def stop_all(procs, work):
    """Stops every process still running (by PID, SIGTERM) and removes the benchmark's folder."""
    for p in procs:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGTERM)
            p.wait(timeout=10)
    shutil.rmtree(work, True)
