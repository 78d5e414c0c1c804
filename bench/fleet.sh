#!/usr/bin/env bash
# Fleet-scale proof (docs/performance.md, "A fleet"): N real hipstack-smid, each in a network namespace
# of its own with its own address, reading the constructed 8-GPU MI300X faults capture; one real
# Prometheus scraping all of them every 15 s with the project's rules loaded; the fleet CLI asking all
# of them. Then the same N namespaces with prometheus-node-exporter as the peer (the exporter most
# nodes already run), scraped by a fresh Prometheus the same way. Prints for each: scrape duration
# p50/p99, samples per scrape, samples ingested per second, head series, Prometheus RSS and CPU, rule
# evaluation time; the fleet CLI's wall time; and the ratios hipstack / node-exporter.
#
# Usage: sudo bench/fleet.sh BUILD_DIR [N] [SECONDS] [CAPTURE]
#   BUILD_DIR  a build tree (monitor-daemon/hipstack-smid, smi-cli/hipstack-smi and -remote)
#   N          daemons (default 200)
#   SECONDS    measured time per phase after every target is up (default 180: 12 scrapes)
#   CAPTURE    the node's sysfs tree (default captures/constructed/mi300x-8gpu-faults/sys: a planted
#              fault on every GPU, so every node has alerts pending or firing; the healthy node is
#              captures/constructed/mi300x-8gpu-spx-nps1/sys)
# Needs root (network namespaces), iproute2, prometheus, promtool, prometheus-node-exporter, curl.
# Everything it makes (namespaces, a bridge, processes, a temporary folder) is removed on exit, also
# on failure; processes are stopped by PID.
set -euo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR [N] [SECONDS] [CAPTURE]}" && pwd)
n=${2:-200}
seconds=${3:-180}
repo=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "fleet.sh: needs root (network namespaces)" >&2; exit 2; }
for tool in ip prometheus promtool prometheus-node-exporter curl python3; do
  command -v "$tool" >/dev/null || { echo "fleet.sh: needs $tool" >&2; exit 2; }
done
smid=$build/monitor-daemon/hipstack-smid
smi=$build/smi-cli/hipstack-smi
export HIPSTACK_SMI_REMOTE=$build/libexec/hipstack/hipstack-smi-remote
capture=${4:-$repo/captures/constructed/mi300x-8gpu-faults/sys}
rules=$repo/containers/prometheus/hipstack-rules.yaml
[ -x "$smid" ] && [ -x "$smi" ] && [ -x "$HIPSTACK_SMI_REMOTE" ] || { echo "fleet.sh: no daemon or CLI under $build" >&2; exit 2; }
(( n >= 1 && n <= 4000 )) || { echo "fleet.sh: N must be 1..4000" >&2; exit 2; }

tag=hsf$$
work=$(mktemp -d "${TMPDIR:-/tmp}/hipstack-fleet-XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  for i in $(seq 1 "$n"); do ip netns del "$tag-$i" 2>/dev/null || true; done
  ip link del "${tag}br" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

address() { echo "10.77.$(( $1 / 250 )).$(( $1 % 250 + 2 ))"; }

# 1. The network: a bridge in this namespace (10.77.0.1/16) and a veth into each node's namespace.
started=$(date +%s)
ip link add "${tag}br" type bridge
ip addr add 10.77.0.1/16 dev "${tag}br"
ip link set "${tag}br" up
for i in $(seq 1 "$n"); do
  ns=$tag-$i
  ip netns add "$ns"
  ip link add "${tag}v$i" type veth peer name eth0 netns "$ns"
  ip link set "${tag}v$i" master "${tag}br" up
  ip -n "$ns" addr add "$(address "$i")/16" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
done
echo "== $n network namespaces on ${tag}br in $(( $(date +%s) - started )) s"

# Waits (polling, bounded) until every node answers URL_PATH on PORT with 200.
wait_nodes() {
  local port=$1 path=$2 deadline=$(( $(date +%s) + 300 )) i
  for i in $(seq 1 "$n"); do
    until curl -sf -o /dev/null --max-time 2 "http://$(address "$i"):$port$path"; do
      (( $(date +%s) < deadline )) || { echo "fleet.sh: node $i not ready on :$port$path within 300 s" >&2; exit 1; }
      sleep 0.2
    done
  done
}

# Starts Prometheus on the nodes' PORT (job JOB, RULES or none); sets prom_pid and prom_url; waits
# until every target is up.
start_prometheus() {
  local job=$1 port=$2 rule_file=$3 dir=$work/prometheus-$1 i
  mkdir -p "$dir"
  local web
  web=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  {
    printf 'global:\n  scrape_interval: 15s\n  scrape_timeout: 10s\n  evaluation_interval: 15s\n'
    [ -n "$rule_file" ] && printf 'rule_files:\n  - %s\n' "$rule_file"
    printf 'scrape_configs:\n  - job_name: %s\n    static_configs:\n      - targets:\n' "$job"
    for i in $(seq 1 "$n"); do printf "          - '%s:%s'\n" "$(address "$i")" "$port"; done
    # Prometheus's own metrics (head series, samples appended, rule evaluation times).
    printf "  - job_name: prometheus\n    static_configs:\n      - targets: ['127.0.0.1:%s']\n" "$web"
  } >"$dir/prometheus.yml"
  promtool check config "$dir/prometheus.yml" >/dev/null
  prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
    --web.listen-address="127.0.0.1:$web" >"$dir/log" 2>&1 &
  prom_pid=$!
  pids+=("$prom_pid")
  prom_url=http://127.0.0.1:$web
  local deadline=$(( $(date +%s) + 120 ))
  until [ "$(promtool query instant "$prom_url" "count(up{job=\"$job\"} == 1)" 2>/dev/null | sed -n 's/.*=> \([0-9]*\) @.*/\1/p')" = "$n" ]; do
    (( $(date +%s) < deadline )) || { echo "fleet.sh: not every $job target up within 120 s" >&2; tail -5 "$dir/log" >&2; exit 1; }
    sleep 1
  done
}

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
# CPU time (user + system, clock ticks) of the processes given, summed.
cpu_ticks() {
  local total=0 pid
  for pid in "$@"; do total=$(( total + $(awk '{print $14 + $15}' "/proc/$pid/stat") )); done
  echo "$total"
}

# Prints the measurements of one phase as KEY=VALUE lines (python: the Prometheus HTTP API).
measure() {
  local job=$1
  python3 - "$prom_url" "$job" "$seconds" <<'PY'
import json, sys, urllib.parse, urllib.request
url, job, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3])
def query(q):
    with urllib.request.urlopen(url + "/api/v1/query?" + urllib.parse.urlencode({"query": q}), timeout=60) as r:
        return json.load(r)["data"]["result"]
def scalar(q):
    result = query(q)
    return float(result[0]["value"][1]) if result else float("nan")
durations = sorted(float(v) for s in query('scrape_duration_seconds{job="%s"}[%ds]' % (job, seconds)) for _, v in s["values"])
def pct(p):
    return durations[min(len(durations) - 1, int(p / 100 * len(durations)))] if durations else float("nan")
print("scrapes=%d" % len(durations))
print("scrape_p50_ms=%.2f" % (1000 * pct(50)))
print("scrape_p99_ms=%.2f" % (1000 * pct(99)))
print("samples_per_scrape=%.0f" % scalar('avg(scrape_samples_scraped{job="%s"})' % job))
own = '{job="prometheus"}'
print("samples_per_second=%.0f" % scalar("sum(rate(prometheus_tsdb_head_samples_appended_total%s[%ds]))" % (own, seconds)))
print("head_series=%.0f" % scalar("prometheus_tsdb_head_series" + own))
print("rule_eval_ms=%.2f" % (1000 * (scalar("sum(prometheus_rule_group_last_duration_seconds%s)" % own) if query("prometheus_rule_group_last_duration_seconds" + own) else 0)))
print("rule_eval_max_ms=%.2f" % (1000 * (scalar("max(max_over_time(prometheus_rule_group_last_duration_seconds%s[%ds]))" % (own, seconds)) if query("prometheus_rule_group_last_duration_seconds" + own) else 0)))
print("rule_groups=%d" % len(query("prometheus_rule_group_last_duration_seconds" + own)))
# CPU, not wall time, is what a capacity model scales: wall times here include waiting for cores
# the exporters share.
print("prometheus_cpu_cores=%.3f" % scalar("rate(process_cpu_seconds_total%s[%ds])" % (own, seconds)))
print("rule_eval_share=%.3f" % (scalar("sum(rate(prometheus_rule_group_duration_seconds_sum%s[%ds]))" % (own, seconds))
                                if query("prometheus_rule_group_duration_seconds_sum" + own) else 0))
slowest = query("topk(1, max_over_time(prometheus_rule_group_last_duration_seconds%s[%ds]))" % (own, seconds))
print("rule_slowest_group=%s" % (slowest[0]["metric"].get("rule_group", "-").rsplit(";", 1)[-1] if slowest else "-"))
PY
}

# 2. hipstack-smid on every node.
started=$(date +%s)
smid_pids=()
for i in $(seq 1 "$n"); do
  ns=$tag-$i
  # One live sample every 5 s (a 15 s scrape sees three), facts and health every 60 s, no windows
  # (a capture's firmware table stands still), costly metrics every 30 s: the default profile.
  printf 'host = node-%d\ndbus = off\nfast_interval_ms = 5000\nslow_interval_ms = 60000\ncostly_interval_ms = 30000\nwindow_interval_ms = 0\n' \
    "$i" >"$work/smid-$i.conf"
  ip netns exec "$ns" "$smid" --config "$work/smid-$i.conf" --sysfs-root "$capture" \
    --http-listen "$(address "$i"):9400" --grpc-listen "$(address "$i"):50051" >"$work/smid-$i.log" 2>&1 &
  pids+=("$!")
  smid_pids+=("$!")
done
wait_nodes 9400 /readyz
echo "== $n hipstack-smid ready in $(( $(date +%s) - started )) s"
for i in $(seq 1 "$n"); do echo "$(address "$i"):50051"; done >"$work/hosts"

start_prometheus hipstack-smid 9400 "$rules"
echo "== Prometheus (rules: $(basename "$rules")) scraping $n hipstack-smid; measuring for $seconds s"
cli_runs=()
ticks0=$(cpu_ticks "${smid_pids[@]}")
cpu_t0=$EPOCHREALTIME
for round in 1 2 3 4 5; do
  sleep $(( seconds / 5 ))
  t0=$EPOCHREALTIME
  code=0
  "$smi" --hostfile "$work/hosts" --host-timeout-ms 10000 --json metric -m power_current,temperature_junction \
    >"$work/fleet-$round.json" 2>"$work/fleet-$round.err" || code=$?
  t1=$EPOCHREALTIME
  gpus=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(1 for g in d["devices"] if g["fault"] is None))' "$work/fleet-$round.json")
  cli_runs+=("$(python3 -c "print('%.0f' % (1000 * ($t1 - $t0)))") ms, exit $code, $gpus GPUs")
done
hip=$(measure hipstack-smid)
alerts=$(promtool query instant "$prom_url" 'count(ALERTS)' 2>/dev/null | sed -n 's/.*=> \([0-9]*\) @.*/\1/p')
alerts=${alerts:-0}
smid_cpu=$(( $(cpu_ticks "${smid_pids[@]}") - ticks0 ))
smid_cpu_s=$(python3 -c "print('%.3f' % ($EPOCHREALTIME - $cpu_t0))")
hip_prom_rss=$(rss_kib "$prom_pid")
smid_rss=0
for pid in "${smid_pids[@]}"; do smid_rss=$(( smid_rss + $(rss_kib "$pid") )); done
kill "$prom_pid"; wait "$prom_pid" 2>/dev/null || true
for pid in "${smid_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
for pid in "${smid_pids[@]}"; do wait "$pid" 2>/dev/null || true; done

# 3. The peer: prometheus-node-exporter (its default collectors) on every node.
started=$(date +%s)
ne_pids=()
for i in $(seq 1 "$n"); do
  ip netns exec "$tag-$i" prometheus-node-exporter --web.listen-address="$(address "$i"):9100" >"$work/ne-$i.log" 2>&1 &
  pids+=("$!")
  ne_pids+=("$!")
done
wait_nodes 9100 /metrics
echo "== $n prometheus-node-exporter ready in $(( $(date +%s) - started )) s"
start_prometheus node 9100 ""
echo "== Prometheus scraping $n node exporters; measuring for $seconds s"
ticks0=$(cpu_ticks "${ne_pids[@]}")
cpu_t0=$EPOCHREALTIME
sleep "$seconds"
peer=$(measure node)
ne_cpu=$(( $(cpu_ticks "${ne_pids[@]}") - ticks0 ))
ne_cpu_s=$(python3 -c "print('%.3f' % ($EPOCHREALTIME - $cpu_t0))")
peer_prom_rss=$(rss_kib "$prom_pid")
ne_rss=0
for pid in "${ne_pids[@]}"; do ne_rss=$(( ne_rss + $(rss_kib "$pid") )); done

# 4. The report.
echo "capture: $capture; alerts pending or firing at the end of the hipstack phase: $alerts"
python3 - "$n" "$seconds" "$hip_prom_rss" "$peer_prom_rss" "$smid_rss" "$ne_rss" "$smid_cpu" "$ne_cpu" "$(getconf CLK_TCK)" \
  "$smid_cpu_s" "$ne_cpu_s" "$hip" "$peer" "${cli_runs[@]}" <<'PY'
import sys
n, seconds, hip_rss, peer_rss, smid_rss, ne_rss, smid_cpu, ne_cpu, hz = (int(a) for a in sys.argv[1:10])
smid_s, ne_s = float(sys.argv[10]), float(sys.argv[11])
hip = dict(l.split("=") for l in sys.argv[12].split())
peer = dict(l.split("=") for l in sys.argv[13].split())
cli = sys.argv[14:]
print("slowest rule group: %s" % hip.pop("rule_slowest_group"))
peer.pop("rule_slowest_group")
rows = [("scrapes measured", "scrapes"), ("scrape duration p50 (ms)", "scrape_p50_ms"), ("scrape duration p99 (ms)", "scrape_p99_ms"),
        ("samples per scrape (one node)", "samples_per_scrape"), ("samples ingested per second", "samples_per_second"),
        ("head series", "head_series"), ("rule evaluation, all groups (ms)", "rule_eval_ms"),
        ("rule evaluation, slowest group over the run (ms)", "rule_eval_max_ms"), ("rule groups", "rule_groups"),
        ("Prometheus CPU (cores)", "prometheus_cpu_cores"), ("rule evaluation (share of a core, wall)", "rule_eval_share")]
print("\n%d nodes (8 MI300X GPUs each), scrape every 15 s, %d s measured" % (n, seconds))
print("%-50s %14s %16s %8s" % ("", "hipstack-smid", "node-exporter", "ratio"))
for title, key in rows:
    a, b = float(hip[key]), float(peer[key])
    ratio = "%.2f" % (a / b) if b else "-"
    print("%-50s %14s %16s %8s" % (title, hip[key], peer[key], ratio))
print("%-50s %14.0f %16.0f %8.2f" % ("Prometheus RSS (MiB)", hip_rss / 1024, peer_rss / 1024, hip_rss / peer_rss))
print("%-50s %14.1f %16.1f %8.2f" % ("exporter RSS per node (MiB)", smid_rss / n / 1024, ne_rss / n / 1024, smid_rss / ne_rss))
cpu = lambda ticks, wall: 100.0 * ticks / hz / wall / n  # % of a core, per node, over the measured time
print("%-50s %14.2f %16.2f %8.2f" % ("exporter CPU per node (% of a core)", cpu(smid_cpu, smid_s), cpu(ne_cpu, ne_s),
                                     cpu(smid_cpu, smid_s) / cpu(ne_cpu, ne_s) if ne_cpu else float("nan")))
print("Prometheus RSS per head series (KiB): %.2f (hipstack), %.2f (node-exporter)"
      % (hip_rss / float(hip["head_series"]), peer_rss / float(peer["head_series"])))
print("fleet CLI, hipstack-smi --hostfile (%d hosts) --json metric -m power_current,temperature_junction:" % n)
for run in cli:
    print("  " + run)
PY
