# Sourced by bench/nvidia_daemon.sh and bench/amd_daemon.sh: one hipstack-smid run measured alone,
# its CPU whole and by thread from /proc/PID/task/*/schedstat (ns), its RSS from /proc/PID/status.
# The caller sets $smid (the program) and $work (a scratch folder); these set $pid while it runs.
pid=
smid_cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap smid_cleanup EXIT

cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s+=$1} END {print s}'; }
# Each thread's name and CPU (ns): the daemon names its own (smid-*); gRPC's and NVML's keep theirs.
threads_ns() { for t in /proc/"$1"/task/*; do echo "$(basename "$t") $(tr ' ' _ <"$t/comm") $(awk '{print $1}' "$t/schedstat")"; done 2>/dev/null | sort; }
now_ns() { date +%s%N; }

# smid_start ARG...: starts "$smid" ARG... --listen 127.0.0.1:0 and returns once /readyz answers
# (every GPU sampled), or exits naming what the daemon said.
smid_start() {
  "$smid" "$@" --listen 127.0.0.1:0 2>"$work/smid.err" &
  pid=$!
  local port=
  for _ in $(seq 200); do
    port=$(sed -n 's/.*listening on .* (port \([0-9]*\)).*/\1/p' "$work/smid.err" | head -n 1)
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "hipstack-smid did not start:"; cat "$work/smid.err"; exit 1; }
  for _ in $(seq 200); do curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" && return; sleep 0.1; done
  echo "hipstack-smid never ready:"; cat "$work/smid.err"; exit 1
}

# smid_measure SECONDS: the running daemon's CPU over SECONDS, by thread, then stops it; sets cpu
# (% of a core) and rss (kB).
smid_measure() {
  local c0 t0 c1 t1
  threads_ns "$pid" >"$work/threads0"
  c0=$(cpu_ns "$pid"); t0=$(now_ns)
  sleep "$1"
  c1=$(cpu_ns "$pid"); t1=$(now_ns)
  threads_ns "$pid" >"$work/threads1"
  echo "   by thread (% of a core; threads of one name summed):"
  join "$work/threads0" "$work/threads1" | awk -v t=$((t1 - t0)) '{c[$2] += $5 - $3} END {for (k in c) printf "     %-18s %.4f\n", k, 100 * c[k] / t}' | sort -k2 -nr
  rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  cpu=$(awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) 'BEGIN {printf "%.3f", 100 * c / t}')
}
