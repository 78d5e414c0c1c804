#!/bin/bash
# Job accounting on a real NVIDIA GPU (docs/jobs.md, docs/nvidia.md): hipstack-smid with a job
# store, a job on GPU 0 around a torch matmul load, and NVML's own energy counter read (pynvml)
# at the job's start and stop as the peer the job's energy is compared with. Reads only: no
# setting of the GPU is changed. Run from a folder made by bench/stage_nvidia.sh (LD_LIBRARY_PATH=lib).
# With `restart`, the daemon is stopped (SIGTERM) halfway through the load and started again: the
# job goes on from its stored state, and its energy still matches NVML's counter.
# Usage: bench/nvidia_job.sh OUT_DIR [LOAD_SECONDS] [restart]
set -eu
out=${1:?usage: $0 OUT_DIR [LOAD_SECONDS] [restart]} load=${2:-20} restart=${3:-}
work=$(mktemp -d)
cat > "$work/smid.conf" <<CONF
dbus = off
fast_interval_ms = 1000
costly_interval_ms = 1000
job_db = $out/jobs.db
CONF
start_daemon() {
  ./hipstack-smid --config "$work/smid.conf" --http-listen 127.0.0.1:0 --grpc-listen "unix:$work/smid.sock" 2>> "$out/smid.err" &
  smid=$!
  for _ in $(seq 100); do [ "$(grep -c "gRPC on" "$out/smid.err")" -ge "$1" ] && break; sleep 0.1; done
}
start_daemon 1
trap 'kill $smid 2>/dev/null; wait $smid 2>/dev/null; rm -rf "$work"' EXIT
export HIPSTACK_SMID_SOCKET=$work/smid.sock
sleep 3  # a few samples before the job: its baseline is the latest
energy() { python3 -c 'import pynvml; pynvml.nvmlInit(); h = pynvml.nvmlDeviceGetHandleByIndex(0); print(pynvml.nvmlDeviceGetTotalEnergyConsumption(h) / 1000)'; }
e0=$(energy); t0=$(date +%s.%N)
./hipstack-smi job start --id h200-load --user bench -g 0
python3 - "$load" <<'PY' &
import sys, time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    for _ in range(20):
        b = a @ a
    torch.cuda.synchronize()
PY
loader=$!
if [ "$restart" = restart ]; then
  sleep $((load / 2))
  kill -TERM $smid; wait $smid || true
  start_daemon 2
  grep "resumed" "$out/smid.err"
fi
wait $loader
./hipstack-smi job stop --id h200-load --json > "$out/job.json"
e1=$(energy); t1=$(date +%s.%N)
./hipstack-smi job show h200-load > "$out/job.txt"
python3 - "$out/job.json" "$e0" "$e1" "$t0" "$t1" <<'PY' | tee "$out/summary.txt"
import json, sys
job = json.load(open(sys.argv[1]))["job"]
f = {x["name"]: x.get("value") for x in job["gpus"][0]["figures"] if "instance" not in x}
nvml = float(sys.argv[3]) - float(sys.argv[2])
wall = float(sys.argv[5]) - float(sys.argv[4])
print("GPU 0 %s: wall %.1f s, samples %d, sampled %.1f s" % (job["gpus"][0]["name"], f["wall_time"], f["samples"], f["sampled_time"]))
print("energy: job %.1f J; NVML counter between the calls %.1f J over %.1f s; ratio %.3f" % (f["energy"], nvml, wall, f["energy"] / nvml))
print("power mean %.1f W, max %.1f W; busy mean %.1f %%; activity mean %s; VRAM peak %.0f MiB; throttle %s s"
      % (f["power_mean"], f["power_max"], f["busy_mean"], f["activity_mean"], f["vram_peak"] / 2**20, f["throttle_time"]))
print("health %s -> %s" % (job["gpus"][0]["health_start"]["verdict"], job["gpus"][0]["health_end"]["verdict"]))
PY
