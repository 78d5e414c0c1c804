#!/usr/bin/env bash
# hipstack-smid's sampling cost on an NVIDIA GPU machine, same run, side by side:
#   - the floor: bench/nvml_floor making the same NVML calls with nothing around them,
#   - "before": the daemon reading every metric every second (costly_interval_ms = fast interval,
#     which is what every release before the cost classes did),
#   - "after": the daemon as shipped (costly metrics every 30 s, energy integrated in between).
# Each runs alone for SECONDS (default 60) after a warm-up; CPU from /proc/PID/schedstat (ns), RSS
# from /proc/PID/status. No client scrapes meanwhile: this is the sampling alone.
#
# Usage: bench/nvidia_daemon.sh DIR [SECONDS]
#   DIR holds hipstack-smid, hipstack-smi and nvml_floor (a build tree or a staged folder with
#   their libraries under DIR/lib, as for the GPU machine).
set -euo pipefail
dir=$(cd "${1:?usage: $0 DIR [SECONDS]}" && pwd)
seconds=${2:-60}
pick() {
  for p in "$dir/$1" "$dir/$2/$1"; do [ -x "$p" ] && { echo "$p"; return; }; done
  echo "no $1 under $dir" >&2; exit 1
}
smid=$(pick hipstack-smid monitor-daemon)
nvml_floor=$(pick nvml_floor bench)
[ -d "$dir/lib" ] && export LD_LIBRARY_PATH=$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
gpus=$(nvidia-smi -L | wc -l)
work=$(mktemp -d "${TMPDIR:-/tmp}/smid-nvbench-XXXXXX")
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s+=$1} END {print s}'; }
# Each thread's name and CPU (ns): the daemon names its own (smid-*); gRPC's and NVML's keep theirs.
threads_ns() { for t in /proc/"$1"/task/*; do echo "$(basename "$t") $(tr ' ' _ <"$t/comm") $(awk '{print $1}' "$t/schedstat")"; done 2>/dev/null | sort; }
now_ns() { date +%s%N; }

echo "== $gpus GPU(s): $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sort | uniq -c | xargs)"
echo "== NVML call costs"
"$nvml_floor" calls 10 1000
echo
echo "== sampling cost over ${seconds} s, every GPU at 1 s"
# The floor loads the libraries hipstack-smid loads (glibc's aside), so that its RSS is the memory
# floor issue 44 measures against: those libraries and NVML initialised and used for these GPUs.
preload=$(ldd "$smid" | awk '$3 ~ /^\// {print $3}' | grep -Ev '/(libc|libm|libpthread|libdl|librt)\.so|ld-linux' | paste -sd: -)
LD_PRELOAD=$preload "$nvml_floor" loop "$seconds" 1000 30000 | tee "$work/floor.txt"
floor=$(awk '/of a core/ {print $(NF-3)}' "$work/floor.txt" | tr -d '%')
floor_rss=$(awk '/RSS/ {print $(NF-1)}' "$work/floor.txt")

# One daemon run with CONFIG_LINES [GRPC_LISTEN]; sets cpu (% of a core) and rss (kB).
daemon() {
  printf 'dbus = off\nfast_interval_ms = 1000\n%s\n' "$1" >"$work/smid.conf"
  "$smid" --config "$work/smid.conf" --listen 127.0.0.1:0 --grpc-listen "${2:-unix:$work/smid.sock}" 2>"$work/smid.err" &
  pid=$!
  local port=
  for _ in $(seq 200); do
    port=$(sed -n 's/.*listening on .* (port \([0-9]*\)).*/\1/p' "$work/smid.err" | head -n 1)
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "hipstack-smid did not start:"; cat "$work/smid.err"; exit 1; }
  for _ in $(seq 200); do curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.1; done
  sleep 12  # past the first window look (10 s) and the first slow sample
  local c0 t0 c1 t1
  threads_ns "$pid" >"$work/threads0"
  c0=$(cpu_ns "$pid"); t0=$(now_ns)
  sleep "$seconds"
  c1=$(cpu_ns "$pid"); t1=$(now_ns)
  threads_ns "$pid" >"$work/threads1"
  echo "   by thread (% of a core; threads of one name summed):"
  join "$work/threads0" "$work/threads1" | awk -v t=$((t1 - t0)) '{c[$2] += $5 - $3} END {for (k in c) printf "     %-18s %.4f\n", k, 100 * c[k] / t}' | sort -k2 -nr
  rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  cpu=$(awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) 'BEGIN {printf "%.3f", 100 * c / t}')
}
echo "== NVML alone, nothing asked of it"
"$nvml_floor" idle 15
echo "== hipstack-smid, every metric every second (before)"
daemon "costly_interval_ms = 1000"
before=$cpu before_rss=$rss
echo "== hipstack-smid as shipped (after)"
daemon ""
after=$cpu after_rss=$rss
echo "== hipstack-smid as shipped, gRPC off (what gRPC's idle threads cost, by difference)"
daemon "" off
nogrpc=$cpu nogrpc_rss=$rss
printf '%-58s %12s %10s\n' "sampling $gpus GPU(s) every second, same run" "% of a core" "RSS MB"
printf '%-58s %12s %10d\n' "bare NVML calls, the daemon's libraries loaded (nvml_floor)" "$floor" $((floor_rss / 1024))
printf '%-58s %12s %10d\n' "hipstack-smid, every metric every second (before)" "$before" $((before_rss / 1024))
printf '%-58s %12s %10d\n' "hipstack-smid, costly metrics every 30 s (after)" "$after" $((after_rss / 1024))
printf '%-58s %12s %10d\n' "hipstack-smid as shipped, gRPC off" "$nogrpc" $((nogrpc_rss / 1024))
awk -v b="$before" -v a="$after" -v f="$floor" -v g="$gpus" 'BEGIN {
  printf "after/before %.2f, after/floor %.1f (target <= 1.3); per GPU %.3f %% of a core, so 8 GPUs %.2f %%\n",
         a / b, (f > 0 ? a / f : 0), a / g, 8 * a / g }'
echo "RSS above the floor: $(( (after_rss - floor_rss) / 1024 )) MB (target <= 8)"
