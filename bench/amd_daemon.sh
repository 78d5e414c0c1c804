#!/usr/bin/env bash
# hipstack-smid's sampling cost on an amdgpu capture against its floor, same run (issue 44): the floor
# is bench/sysfs_floor making the very reads the daemon made (which files, how often: traced with
# strace for TRACE seconds), with nothing around them. Then each runs alone for SECONDS; CPU from
# /proc/PID/schedstat, by thread for the daemon. Nobody asks the daemon meanwhile.
#
# Usage: bench/amd_daemon.sh BUILD [CAPTURE_SYS] [SECONDS] [TRACE]
#   CAPTURE_SYS: default the 8-GPU MI300X capture. SECONDS and TRACE: default 60, and whole multiples
#   of 30 s (the slow and costly intervals) so that each window holds the slow reads in proportion.
#   Needs strace.
set -euo pipefail
build=$(cd "${1:?usage: $0 BUILD [CAPTURE_SYS] [SECONDS] [TRACE]}" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
capture=${2:-$here/captures/constructed/mi300x-8gpu-spx-nps1/sys}
seconds=${3:-60}
trace=${4:-60}
smid=$build/monitor-daemon/hipstack-smid
floor=$build/bench/sysfs_floor
work=$(mktemp -d "${TMPDIR:-/tmp}/smid-amdbench-XXXXXX")
. "$(dirname "$0")/daemon_cpu.sh"

start_daemon() {
  printf 'dbus = off\n' >"$work/smid.conf"
  smid_start --config "$work/smid.conf" --sysfs-root "$capture" --grpc-listen "unix:$work/smid.sock"
  sleep 12  # past the first slow sample and window look: the steady state is measured
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
smid_measure "$seconds"
daemon_cpu=$cpu
echo "hipstack-smid ${daemon_cpu} % of a core (RSS $((rss / 1024)) MB), the floor ${floor_cpu} %:" \
     "$(awk -v d="$daemon_cpu" -v f="$floor_cpu" 'BEGIN {printf "%.1fx the floor (target <= 1.3)", (f > 0 ? d / f : 0)}')"
