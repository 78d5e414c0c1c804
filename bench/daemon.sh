#!/usr/bin/env bash
# hipstack-smid's /metrics under load, side by side with its ceiling and a peer, in one run:
#   - nginx serving a static copy of the same page (what this machine can serve at best),
#   - prometheus-node-exporter serving its own metrics (a Prometheus exporter peer);
# plus the daemon's memory, its CPU per sampling cycle, and gRPC GetMetrics latency.
# Captures: the 8-GPU MI300X node (SPX) and the same node in CPX mode (64 partitions).
#
# Usage: bench/daemon.sh BUILD_DIR [SECONDS_PER_RUN] [CONNECTIONS]
# Needs: wrk, nginx (nginx-light), prometheus-node-exporter, python3-grpcio (Debian packages).
set -euo pipefail
build=$(realpath "${1:?usage: $0 BUILD_DIR [SECONDS] [CONNECTIONS]}")
seconds=${2:-10}
connections=${3:-16}
here=$(cd "$(dirname "$0")/.." && pwd)
smid=$build/monitor-daemon/hipstack-smid
for tool in wrk nginx prometheus-node-exporter; do
  command -v "$tool" >/dev/null || { echo "$tool is missing (apt-get install wrk nginx-light prometheus-node-exporter)"; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/smid-bench-XXXXXX")
chmod 755 "$work"  # nginx workers run as another user
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_http() { for _ in $(seq 100); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done; echo "no answer from $1"; exit 1; }

# wrk's requests/s, median and p99 latency (ms) for a URL.
load() {
  wrk -t2 -c"$connections" -d"${seconds}s" --latency "$1" >"$work/wrk.out"
  awk '/Requests\/sec/ {rps=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2}
       function ms(v) { if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /s$/) return v*1000; return v }
       END {printf "%.0f %.3f %.3f\n", rps, ms(p50), ms(p99)}' "$work/wrk.out"
}

rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s+=$1} END {print s}'; }

# nginx, one config for both captures: it serves whatever page.txt holds.
mkdir -p "$work/www"
nginx_port=$(free_port)
cat >"$work/nginx.conf" <<EOF
worker_processes auto;
pid $work/nginx.pid;
error_log $work/nginx.err;
daemon off;
events { worker_connections 1024; }
http { access_log off; default_type text/plain; server { listen 127.0.0.1:$nginx_port; root $work/www; } }
EOF
nginx -c "$work/nginx.conf" -p "$work" &
pids+=($!)
exporter_port=$(free_port)
prometheus-node-exporter --web.listen-address="127.0.0.1:$exporter_port" >"$work/exporter.err" 2>&1 &
pids+=($!)

printf '%-34s %10s %10s %10s %10s\n' "server (same run)" "req/s" "p50 ms" "p99 ms" "page KB"
for capture in mi300x-8gpu-spx-nps1 mi300x-8gpu-cpx-nps1; do
  port=$(free_port)
  "$smid" --sysfs-root "$here/captures/constructed/$capture/sys" --http-listen "127.0.0.1:$port" \
    --grpc-listen "unix:$work/smid.sock" 2>"$work/smid.err" &
  smid_pid=$!
  pids+=("$smid_pid")
  wait_http "http://127.0.0.1:$port/readyz"
  curl -sf "http://127.0.0.1:$port/metrics" -o "$work/www/page.txt"
  wait_http "http://127.0.0.1:$nginx_port/page.txt"
  kb=$(( $(stat -c %s "$work/www/page.txt") / 1024 ))
  read -r s_rps s_p50 s_p99 < <(load "http://127.0.0.1:$port/metrics")
  read -r n_rps n_p50 n_p99 < <(load "http://127.0.0.1:$nginx_port/page.txt")
  printf '%-34s %10s %10s %10s %10s\n' "hipstack-smid ($capture)" "$s_rps" "$s_p50" "$s_p99" "$kb" \
    "nginx, static copy" "$n_rps" "$n_p50" "$n_p99" "$kb"
  awk -v a="$s_rps" -v b="$n_rps" -v c="$s_p50" -v d="$n_p50" \
    'BEGIN {printf "  ratio smid/nginx: throughput %.2f (target >= 0.5), median latency %.2f (target <= 2)\n", a/b, c/d}'
  echo "  daemon RSS after load: $(( $(rss_kb "$smid_pid") / 1024 )) MB (target <= 30)"
  # CPU of the sampling alone (no requests), as a share of one core.
  sleep 2
  a=$(cpu_ns "$smid_pid"); sleep 20; b=$(cpu_ns "$smid_pid")
  awk -v a="$a" -v b="$b" 'BEGIN {printf "  sampling CPU (1 s interval, 20 s idle): %.2f %% of one core (target < 1)\n", (b-a)/1e9/20*100}'
  /usr/bin/python3 - "$here/wire/proto" "$work" <<'EOF'
import os, statistics, sys, time
from grpc_tools import protoc
import grpc
proto, work = sys.argv[1], sys.argv[2]
protoc.main(["protoc", "-I" + proto, "--python_out=" + work, "--grpc_python_out=" + work, "hipstack/monitor/v1/monitor.proto"])
sys.path.insert(0, work)
from hipstack.monitor.v1 import monitor_pb2 as pb, monitor_pb2_grpc as rpc
stub = rpc.MonitorStub(grpc.insecure_channel("unix:" + os.path.join(work, "smid.sock")))
stub.ListDevices(pb.ListDevicesRequest())
for label, request in (("every metric of every GPU", pb.GetMetricsRequest()),
                       ("5 metrics of GPU 0", pb.GetMetricsRequest(devices=["0"], metrics=["power_current", "temperature_junction", "gpu_busy", "clock_sclk", "vram_used"]))):
    times = []
    for _ in range(300):
        start = time.perf_counter()
        stub.GetMetrics(request)
        times.append(time.perf_counter() - start)
    times.sort()
    print("  gRPC GetMetrics (%s, Python client): median %.3f ms, p99 %.3f ms" % (label, statistics.median(times) * 1e3, times[int(len(times) * 0.99)] * 1e3))
EOF
  kill "$smid_pid"
  wait "$smid_pid" 2>/dev/null || true
done
read -r e_rps e_p50 e_p99 < <(load "http://127.0.0.1:$exporter_port/metrics")
printf '%-34s %10s %10s %10s %10s\n' "prometheus-node-exporter (peer)" "$e_rps" "$e_p50" "$e_p99" \
  "$(( $(curl -sf "http://127.0.0.1:$exporter_port/metrics" | wc -c) / 1024 ))"
