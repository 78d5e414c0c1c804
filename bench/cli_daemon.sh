#!/usr/bin/env bash
# hipstack-smi answered by the node's hipstack-smid (the local query protocol) against the other ways
# to get the same live fields, same run, interleaved round by round (these machines are noisy):
#   daemon  hipstack-smi metric --json -m FIELDS              (the local daemon: the default)
#   all     hipstack-smi metric --json                        (the local daemon, every live metric)
#   grpc    hipstack-smi --host unix://SOCKET metric --json -m FIELDS   (hipstack-smi-remote)
#   direct  hipstack-smi --direct metric --json -m FIELDS     (opens NVML / reads sysfs itself)
#   compat  hipstack-smi --nvidia-smi --query-gpu=FIELDS --format=csv   (the local daemon, nvidia-smi's form)
#   compatd hipstack-smi --nvidia-smi --direct --query-gpu=FIELDS --format=csv   (reads itself)
#   nvsmi   nvidia-smi --query-gpu=SAME FIELDS --format=csv   (NVIDIA machines only)
# Prints each one's median and p90 wall time (ms, from fork to exit; bash's EPOCHREALTIME) and the ratios
# against the daemon path.
#
# Usage: bench/cli_daemon.sh DIR [ROUNDS] [CAPTURE]
#   DIR holds hipstack-smid, hipstack-smi and hipstack-smi-remote (a build tree, or a staged folder
#   with their libraries under DIR/lib, as for the GPU machine). CAPTURE (a sysfs tree): read it
#   instead of the machine's GPUs (no nvidia-smi column then).
set -euo pipefail
dir=$(cd "${1:?usage: $0 DIR [ROUNDS] [CAPTURE]}" && pwd)
rounds=${2:-50}
capture=${3:-}
pick() {
  for p in "$dir/$1" "$dir/$2/$1"; do [ -x "$p" ] && { echo "$p"; return; }; done
  echo "no $1 under $dir" >&2; exit 1
}
smid=$(pick hipstack-smid monitor-daemon)
smi=$(pick hipstack-smi smi-cli)
export HIPSTACK_SMI_REMOTE=$(pick hipstack-smi-remote libexec/hipstack)
[ -d "$dir/lib" ] && export LD_LIBRARY_PATH=$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=$(mktemp -d "${TMPDIR:-/tmp}/smi-cli-bench-XXXXXX")
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# The same live fields both ways (nvidia_smi_compat.cpp maps each nvidia-smi field to these).
fields=temperature_junction,power_average,clock_sm,clock_mclk,gpu_busy,memory_busy,vram_used,vram_free
nv_fields=index,temperature.gpu,power.draw,clocks.sm,clocks.mem,utilization.gpu,utilization.memory,memory.used,memory.free
root=()
[ -n "$capture" ] && root=(--sysfs-root "$capture")

printf 'dbus = off\nfast_interval_ms = 1000\n' >"$work/smid.conf"
"$smid" --config "$work/smid.conf" "${root[@]}" --http-listen 127.0.0.1:0 --grpc-listen "unix:$work/smid.sock" \
  2>"$work/smid.err" &
pid=$!
port=
for _ in $(seq 200); do
  port=$(sed -n 's/.*listening on .* (port \([0-9]*\)).*/\1/p' "$work/smid.err" | head -n 1)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "hipstack-smid did not start:"; cat "$work/smid.err"; exit 1; }
for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.1; done
export HIPSTACK_SMID_SOCKET=$work/smid.sock

ways=(daemon all grpc direct compat compatd)
run_daemon() { "$smi" metric --json -m "$fields"; }
run_grpc() { "$smi" --host "unix://$work/smid.sock" metric --json -m "$fields"; }
run_direct() { "$smi" --direct "${root[@]}" metric --json -m "$fields"; }
run_nvsmi() { nvidia-smi --query-gpu="$nv_fields" --format=csv; }
run_compat() { "$smi" --nvidia-smi --query-gpu="$nv_fields" --format=csv; }
run_compatd() { "$smi" --nvidia-smi --direct "${root[@]}" --query-gpu="$nv_fields" --format=csv; }
run_all() { "$smi" metric --json; }  # every live metric of every GPU, from the daemon
if [ -z "$capture" ] && command -v nvidia-smi >/dev/null; then ways+=(nvsmi); fi

# The daemon path must really be the daemon's answer (sample_age_s), the direct one must not.
run_daemon | grep -q '"sample_age_s"' || { echo "the daemon did not answer hipstack-smi"; exit 1; }
run_direct | grep -q '"sample_age_s"' && { echo "--direct was answered by the daemon"; exit 1; }
# ... and so must the compat path's: with a capture, its UUIDs are the capture's, not this machine's.
if [ -n "$capture" ]; then
  diff <("$smi" --nvidia-smi --query-gpu=uuid --format=csv) \
       <("$smi" --nvidia-smi --direct "${root[@]}" --query-gpu=uuid --format=csv) >/dev/null ||
    { echo "the compat path did not answer from the daemon"; exit 1; }
fi
gpus=$("$smi" --json list | grep -c '"index"')
echo "== $gpus GPU(s)${capture:+ (capture $capture)}; $rounds rounds, ways interleaved; fields: $fields"
for way in "${ways[@]}"; do run_$way >/dev/null 2>&1; done  # warm the page cache
for _ in $(seq "$rounds"); do
  for way in "${ways[@]}"; do
    t0=${EPOCHREALTIME/./}  # µs, without a process of its own
    run_$way >/dev/null 2>"$work/err" || { echo "$way failed:"; cat "$work/err"; tail -5 "$work/smid.err"; exit 1; }
    echo $(( ${EPOCHREALTIME/./} - t0 )) >>"$work/$way.us"
  done
done
stat() { sort -n "$work/$1.us" | awk '{a[NR]=$1} END {printf "%.2f %.2f", a[int((NR+1)/2)]/1e3, a[int(NR*0.9+0.5)]/1e3}'; }
read -r base _ <<<"$(stat daemon)"
printf '%-8s %10s %10s %18s\n' way median_ms p90_ms "median/daemon's"
for way in "${ways[@]}"; do
  read -r med p90 <<<"$(stat "$way")"
  printf '%-8s %10s %10s %17.1fx\n' "$way" "$med" "$p90" "$(awk -v a="$med" -v b="$base" 'BEGIN {print a / b}')"
done
