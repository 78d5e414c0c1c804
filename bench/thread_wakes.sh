#!/bin/bash
# bench/thread_wakes.sh SMID [LIBDIR]: how often each of hipstack-smid's threads wakes (voluntary
# context switches per second, by thread name) over 20 s on the 8-GPU MI300X capture, 1 s sampling,
# nobody asking: the idle cost issue 44 wants gone (threads that wake with no work). Run two builds
# in turn to compare them. LIBDIR: the libraries of a staged build (bench/stage_nvidia.sh).
set -eu
smid=${1:?usage: $0 SMID [LIBDIR]}
[ -n "${2:-}" ] && export LD_LIBRARY_PATH=$2
capture=$(cd "$(dirname "$0")/.." && pwd)/captures/constructed/mi300x-8gpu-spx-nps1/sys
work=$(mktemp -d)
printf 'dbus = off\n' >"$work/smid.conf"
"$smid" --config "$work/smid.conf" --sysfs-root "$capture" --listen 127.0.0.1:0 --grpc-listen "unix:$work/smid.sock" 2>"$work/err" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
sleep 8  # past the first samples and the first slow sample
snapshot() {
  for t in /proc/"$pid"/task/*; do echo "$(tr ' ' _ <"$t/comm") $(awk '/^voluntary_ctxt_switches/ {print $2}' "$t/status")"; done |
    awk '{c[$1] += $2} END {for (k in c) print k, c[k]}' | sort
}
snapshot >"$work/a"
sleep 20
snapshot >"$work/b"
join "$work/a" "$work/b" | awk '{printf "%-18s %6.2f wakes/s\n", $1, ($3 - $2) / 20}' | sort -k2 -nr
