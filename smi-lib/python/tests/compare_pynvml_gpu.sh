#!/bin/sh
# On an NVIDIA GPU machine with NVIDIA's pynvml: the same pynvml script (pynvml_figures.py) with
# NVIDIA's pynvml and with hipstack.pynvml, three times each, interleaved; with --load a torch process
# holds 20 GiB and runs bf16 matmuls meanwhile (nothing of the GPU's settings is changed). Prints the
# JSON of every run and nvidia-smi's view. Staged as bench/stage_nvidia.sh stages, plus python/ (the
# hipstack package and pynvml_figures.py): docs/python.md has the figures.
#   compare_pynvml_gpu.sh [--load]        (OUT: where the outputs go, default .)
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib HIPSTACK_SMI_LIBRARY=$PWD/lib/libhipstack-smi.so.0 PYTHONPATH=$PWD/python
out=${OUT:-.}
load=
if [ "${1:-}" = --load ]; then
  python3 - > "$out/load.log" 2>&1 <<'PY' &
import time
import torch
x = torch.empty(20 * 2**30, dtype=torch.uint8, device="cuda")
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
print("ready", flush=True)
end = time.time() + 25
while time.time() < end:
    a = (a @ a).clamp_(-1, 1)
torch.cuda.synchronize()
PY
  load=$!
  until grep -q ready "$out/load.log" 2>/dev/null; do kill -0 $load 2>/dev/null || exit 1; sleep 0.2; done
  sleep 3  # NVML's utilisation is a sample over its last period: let one pass under load
fi
for n in 1 2 3; do
  python3 python/pynvml_figures.py pynvml > "$out/real$n.json" 2> "$out/real$n.err"
  python3 python/pynvml_figures.py hipstack.pynvml > "$out/ours$n.json" 2> "$out/ours$n.err"
done
nvidia-smi --query-gpu=name,uuid,memory.total,memory.used,power.draw,temperature.gpu,utilization.gpu --format=csv > "$out/nvidia-smi.csv"
nvidia-smi --query-compute-apps=pid,used_memory --format=csv >> "$out/nvidia-smi.csv"
[ -z "$load" ] || wait $load
cat "$out"/real*.json "$out"/ours*.json "$out"/*.err "$out/nvidia-smi.csv"
