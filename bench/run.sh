#!/usr/bin/env bash
# Benchmarks hipstack-smi against AMD's rocm-smi 5.2.3 on the same live tree, side by side, and the
# library's per-GPU sampling cost against rocm_smi_lib in one process. Needs root (unshare -m).
#
#   bench/run.sh [RUNS]        (default 50 cold runs per command)
#
# Trees (each laid out live by tools/live_tree.py --for-rocm-smi and bind-mounted over /sys):
#   1 GPU : captures/real/lact/rx6900xt (a real RX 6900 XT recording)
#   8 GPU : captures/constructed/mi300x-8gpu-spx-nps1, without its gpu_metrics files, because
#           rocm-smi 5.2.3 asserts on gpu_metrics v1.6 (both tools read the same tree); hipstack is
#           also timed on the full tree, gpu_metrics included.
# Commands compared: `hipstack-smi metric --json` and the rocm-smi flags that print the same live
# metrics: --json --showtemp --showpower --showuse --showmemuse --showmeminfo vram vis_vram gtt
# --showclocks --showfan --showperflevel --showvoltage.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-50}
[ "$(id -u)" -eq 0 ] || { echo "bench/run.sh: needs root for unshare -m" >&2; exit 77; }
"$top/scripts/deps.sh" test
for tool in hyperfine rocm-smi; do
  command -v "$tool" >/dev/null || { echo "bench/run.sh: installing $tool" >&2; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine librocm-smi-dev >/dev/null; }
done
dpkg-query -W librocm-smi-dev >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq librocm-smi-dev >/dev/null
cmake -S "$top" -B "$top/build-bench" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHIPSTACK_BUILD_TESTS=OFF >/dev/null
cmake --build "$top/build-bench" --target hipstack-smi bench_sample >/dev/null
smi="$top/build-bench/smi-cli/hipstack-smi"
sampler="$top/build-bench/bench/bench_sample"
work=$(mktemp -d /tmp/hipstack-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

python3 "$top/tools/live_tree.py" --for-rocm-smi "$top/captures/real/lact/rx6900xt/sys" "$work/one" 2>/dev/null
python3 "$top/tools/live_tree.py" --for-rocm-smi "$top/captures/constructed/mi300x-8gpu-spx-nps1/sys" "$work/eight-full" 2>/dev/null
cp -a "$work/eight-full" "$work/eight"
find "$work/eight/devices" -name gpu_metrics -delete

rocm_flags="--json --showtemp --showpower --showuse --showmemuse --showmeminfo vram vis_vram gtt --showclocks --showfan --showperflevel --showvoltage"
cat > "$work/inside.sh" <<INSIDE
set -e
mount -t tmpfs none /dev/shm
for tree in one eight; do
  mount --bind "$work/\$tree" /sys
  echo "== tree: \$tree (\$("$smi" list --csv | tail -n +2 | wc -l) GPUs)"
  hyperfine -N -i --warmup 3 --runs $runs --export-json "$work/\$tree.json" \
    "$smi metric --json" "rocm-smi $rocm_flags" 2>&1 | grep -E "Time|±|faster|metric|rocm-smi" || true
  "$sampler" 2000
  umount /sys
done
mount --bind "$work/eight-full" /sys
echo "== tree: eight-full (gpu_metrics v1.6 present; rocm-smi cannot read it)"
hyperfine -N --warmup 3 --runs $runs --export-json "$work/eight-full.json" "$smi metric --json" 2>&1 | grep -E "Time|±" || true
"$sampler" 2000
INSIDE
unshare -m --propagation private bash "$work/inside.sh"

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
print("\n== summary (median of cold runs)")
print(f"{'tree':<11} {'hipstack-smi metric --json':>28} {'rocm-smi 5.2.3':>16} {'ratio':>8}")
for tree in ("one", "eight", "eight-full"):
    results = json.load(open(f"{work}/{tree}.json"))["results"]
    ours = results[0]["median"] * 1e3
    if len(results) > 1:
        theirs = results[1]["median"] * 1e3
        print(f"{tree:<11} {ours:>25.2f} ms {theirs:>13.1f} ms {theirs / ours:>7.1f}x")
    else:
        print(f"{tree:<11} {ours:>25.2f} ms {'n/a':>16} {'-':>8}")
PY
