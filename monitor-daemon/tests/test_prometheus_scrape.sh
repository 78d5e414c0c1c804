#!/bin/bash
# A real Prometheus server scrapes hipstack-smid: both run on 127.0.0.1 (free ports), started here
# and stopped by PID on exit. Passes when Prometheus sees the 8 GPUs of the SPX capture up and
# 8 junction temperature series.
#
# Usage: test_prometheus_scrape.sh HIPSTACK_SMID CAPTURES_DIR
# Exit: 0 pass, 1 fail, 77 skip (no prometheus or promtool).
set -euo pipefail

smid=${1:?usage: $0 HIPSTACK_SMID CAPTURES_DIR}
captures=${2:?usage: $0 HIPSTACK_SMID CAPTURES_DIR}
prometheus=${PROMETHEUS:-/usr/bin/prometheus}
if [[ ! -x $prometheus ]]; then prometheus=$(command -v prometheus || true); fi
promtool=$(command -v promtool || true)
if [[ -z $prometheus || -z $promtool ]]; then
  echo "SKIP: prometheus and promtool are needed"
  exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/smid-prometheus-XXXXXX")
smid_pid= prom_pid=
cleanup() {
  local rc=$?
  for pid in $prom_pid $smid_pid; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
  done
  if [[ $rc -ne 0 ]]; then
    echo "--- hipstack-smid stderr"; cat "$work/smid.err" 2>/dev/null || true
    echo "--- prometheus log (tail)"; tail -n 30 "$work/prometheus.log" 2>/dev/null || true
  fi
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() { echo "FAIL: $*"; exit 1; }

# A port nobody listens on now (Prometheus cannot report a port 0 pick back to us).
free_port() {
  local port
  for _ in $(seq 50); do
    port=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return; fi
  done
  fail "no free port found"
}

# 1. The daemon, port 0: the port is on stderr.
"$smid" --listen 127.0.0.1:0 --grpc-listen "unix:$work/smid.sock" --sysfs-root "$captures/constructed/mi300x-8gpu-spx-nps1/sys" 2>"$work/smid.err" &
smid_pid=$!
smid_port=
for _ in $(seq 100); do
  smid_port=$(sed -n 's/.*listening on .* (port \([0-9]*\)).*/\1/p' "$work/smid.err" | head -n 1)
  [[ -n $smid_port ]] && break
  kill -0 "$smid_pid" 2>/dev/null || fail "hipstack-smid exited early"
  sleep 0.1
done
[[ -n $smid_port ]] || fail "hipstack-smid did not print its port"
echo "hipstack-smid (pid $smid_pid) on 127.0.0.1:$smid_port"

# 2. Prometheus: scrape every second, storage in the temp dir.
cat >"$work/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: hipstack-smid
    static_configs:
      - targets: ['127.0.0.1:$smid_port']
YAML
"$promtool" check config "$work/prometheus.yml" >/dev/null || fail "promtool check config"

prom_port=
for attempt in 1 2 3; do
  port=$(free_port)
  "$prometheus" --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
    --web.listen-address="127.0.0.1:$port" --log.level=info >"$work/prometheus.log" 2>&1 &
  prom_pid=$!
  for _ in $(seq 100); do
    if ! kill -0 "$prom_pid" 2>/dev/null; then wait "$prom_pid" || true; prom_pid=; break; fi
    if grep -q "Server is ready to receive web requests" "$work/prometheus.log"; then prom_port=$port; break; fi
    sleep 0.1
  done
  [[ -n $prom_port ]] && break
  if [[ -n $prom_pid ]]; then kill -KILL "$prom_pid" 2>/dev/null || true; wait "$prom_pid" 2>/dev/null || true; prom_pid=; fi
  echo "prometheus did not start on port $port (attempt $attempt)"
done
[[ -n $prom_port ]] || fail "prometheus did not start"
url="http://127.0.0.1:$prom_port"
echo "prometheus (pid $prom_pid) on $url"

# promtool prints "{} => 8 @[...]" for a scalar-like vector; nothing when the vector is empty.
query_value() {
  "$promtool" query instant "$url" "$1" 2>/dev/null | sed -n 's/.*=> \([^ ]*\) @.*/\1/p' | head -n 1
}

# 3. All 8 GPUs up within 20 s.
deadline=$((SECONDS + 20))
up=
while ((SECONDS < deadline)); do
  up=$(query_value 'count(hipstack_gpu_up == 1)')
  [[ $up == 8 ]] && break
  sleep 0.5
done
[[ $up == 8 ]] || fail "count(hipstack_gpu_up == 1) is '${up:-empty}', expected 8"
echo "count(hipstack_gpu_up == 1) = 8"

# 4. One junction temperature per GPU, the target healthy, the scrape clean.
series=$("$promtool" query instant "$url" 'hipstack_gpu_temperature_junction_celsius' | grep -c '=>' || true)
[[ $series == 8 ]] || fail "hipstack_gpu_temperature_junction_celsius has $series series, expected 8"
echo "hipstack_gpu_temperature_junction_celsius: 8 series"
[[ $(query_value 'up{job="hipstack-smid"}') == 1 ]] || fail "up{job=\"hipstack-smid\"} is not 1"
[[ $(query_value 'count(count by (gpu, uuid, bdf, host) (hipstack_gpu_up))') == 8 ]] || fail "labels of hipstack_gpu_up"
[[ $(query_value 'count(hipstack_smid_build_info)') == 1 ]] || fail "hipstack_smid_build_info missing"
# The capture's own values come back through PromQL (card0's hwmon: power1_input 133000000 µW,
# temp2_input 35000 m°C; mem_info_vram_total), in base units.
[[ $(query_value 'hipstack_gpu_power_current_watts{gpu="0"}') == 133 ]] || fail "GPU 0 power is not the capture's 133 W"
[[ $(query_value 'hipstack_gpu_temperature_junction_celsius{gpu="0"}') == 35 ]] || fail "GPU 0 junction is not the capture's 35 C"
vram=$(cat "$captures/constructed/mi300x-8gpu-spx-nps1/sys/class/drm/card0/device/mem_info_vram_total")
[[ $(query_value 'hipstack_gpu_vram_total_bytes{gpu="0"}') == "$vram" ]] || fail "GPU 0 VRAM total is not the capture's $vram"
# Identity and partition facts are labels of one info series each (the default profile,
# docs/daemon.md "Series profiles"); a state set has exactly one state at 1 per GPU.
[[ $(query_value 'count(hipstack_gpu_partition_info{partition_compute_units="304"})') == 8 ]] || fail "the 8 partitions' info series do not say 304 CUs"
[[ $(query_value 'count(hipstack_gpu_info{gfx_target="gfx942",compute_partition="SPX"})') == 8 ]] || fail "hipstack_gpu_info does not name gfx942 and SPX for 8 GPUs"
[[ $(query_value 'sum(hipstack_gpu_performance_level)') == 8 ]] || fail "hipstack_gpu_performance_level is not one state per GPU"
echo "PromQL returns the capture's values (power 133 W, junction 35 C, VRAM $vram B, 8 x 304 CUs, gfx942, one performance level each)"
samples=$(query_value 'scrape_samples_scraped{job="hipstack-smid"}')
# Every GPU's series, and within the default profile's budget: at most 60 per MI300X GPU plus the
# daemon's two (docs/daemon.md, "Series profiles").
[[ -n $samples && $samples -ge $((8 * 40)) && $samples -le $((8 * 60 + 2)) ]] \
  || fail "scrape_samples_scraped is '${samples:-empty}', expected 320..482 (8 GPUs, default profile)"
echo "scrape_samples_scraped = $samples (8 GPUs, default profile: at most 8 x 60 + 2)"
if grep -Ei 'level=(warn|error).*(scrape|append)' "$work/prometheus.log"; then
  fail "prometheus complained about the scrape"
fi
echo "PASS"
