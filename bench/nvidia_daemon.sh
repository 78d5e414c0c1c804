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
. "$(dirname "$0")/daemon_cpu.sh"

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
  smid_start --config "$work/smid.conf" --grpc-listen "${2:-unix:$work/smid.sock}"
  sleep 12  # past the first window look (10 s) and the first slow sample: the steady state is measured
  smid_measure "$seconds"
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
