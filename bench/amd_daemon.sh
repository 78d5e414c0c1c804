#!/usr/bin/env bash
# hipstack-smid's sampling cost on an amdgpu capture against its floor, same run (issue 44): the floor
# is bench/sysfs_floor making the very reads the daemon made (which files, how often: traced with
# strace for TRACE seconds), with nothing around them. Then each runs alone for SECONDS; CPU from
# /proc/PID/schedstat, by thread for the daemon. Nobody asks the daemon meanwhile.
#
# Usage: bench/amd_daemon.sh BUILD [CAPTURE_SYS] [SECONDS] [TRACE]
#   CAPTURE_SYS: default the 8-GPU MI300X capture. Needs strace.
set -euo pipefail
build=$(cd "${1:?usage: $0 BUILD [CAPTURE_SYS] [SECONDS] [TRACE]}" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
capture=${2:-$here/captures/constructed/mi300x-8gpu-spx-nps1/sys}
seconds=${3:-60}
trace=${4:-30}
smid=$build/monitor-daemon/hipstack-smid
floor=$build/bench/sysfs_floor
work=$(mktemp -d "${TMPDIR:-/tmp}/smid-amdbench-XXXXXX")
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s+=$1} END {print s}'; }
threads_ns() { for t in /proc/"$1"/task/*; do echo "$(basename "$t") $(tr ' ' _ <"$t/comm") $(awk '{print $1}' "$t/schedstat")"; done 2>/dev/null | sort; }
now_ns() { date +%s%N; }

start_daemon() {
  printf 'dbus = off\n' >"$work/smid.conf"
  "$smid" --config "$work/smid.conf" --sysfs-root "$capture" --listen 127.0.0.1:0 --grpc-listen "unix:$work/smid.sock" 2>"$work/smid.err" &
  pid=$!
  for _ in $(seq 200); do grep -q "listening on" "$work/smid.err" && break; sleep 0.1; done
  sleep 15  # past the first samples and a slow one
}

echo "== what hipstack-smid reads, traced for $trace s"
start_daemon
timeout "$trace" strace -f -qq -p "$pid" -e trace=openat -o "$work/trace.txt" || true
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
# Successful opens under the capture, as reads a second; folders (O_DIRECTORY) are listed, not read.
grep -v ' = -1 ' "$work/trace.txt" | grep -F "$capture" |
  sed -n 's/.*openat(AT_FDCWD, "\([^"]*\)", \([^)]*\)).*/\2 \1/p' |
  awk '{print ($1 ~ /O_DIRECTORY/ ? "d" : "f"), $2}' |
  sort | uniq -c | awk -v t="$trace" '{printf "%.4f %s %s\n", $1 / t, $2, $3}' >"$work/list.txt"
echo "   $(wc -l <"$work/list.txt") files, $(awk '{s += $1} END {printf "%.1f", s}' "$work/list.txt") reads a second"

echo "== the floor: those reads by a bare loop, $seconds s"
"$floor" "$work/list.txt" "$seconds" | tee "$work/floor.txt"
floor_cpu=$(awk '{print $(NF-3)}' "$work/floor.txt" | tr -d '%')

echo "== hipstack-smid as shipped (default configuration, gRPC on, nobody asking), $seconds s"
start_daemon
threads_ns "$pid" >"$work/threads0"; c0=$(cpu_ns "$pid"); t0=$(now_ns)
sleep "$seconds"
c1=$(cpu_ns "$pid"); t1=$(now_ns); threads_ns "$pid" >"$work/threads1"
echo "   by thread (% of a core; threads of one name summed):"
join "$work/threads0" "$work/threads1" | awk -v t=$((t1 - t0)) '{c[$2] += $5 - $3} END {for (k in c) printf "     %-18s %.4f\n", k, 100 * c[k] / t}' | sort -k2 -nr
daemon_cpu=$(awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) 'BEGIN {printf "%.3f", 100 * c / t}')
rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
echo "hipstack-smid ${daemon_cpu} % of a core (RSS $((rss / 1024)) MB), the floor ${floor_cpu} %:" \
     "$(awk -v d="$daemon_cpu" -v f="$floor_cpu" 'BEGIN {printf "%.1fx the floor (target <= 1.3)", (f > 0 ? d / f : 0)}')"
