#!/bin/bash
# Records what nvidia-smi and pynvml print on the GPU test machine, for the nvidia-smi and pynvml
# compatibility layers (docs/nvidia-smi-compat.md, docs/python.md). Reads only: no setting is changed.
# Usage: record_nvidia_smi.sh OUT_DIR
set -u
out=${1:?OUT_DIR}
mkdir -p "$out"
run() {  # run NAME CMD...: stdout, stderr and exit code of one command
  local name=$1; shift
  timeout 60 "$@" >"$out/$name.out" 2>"$out/$name.err"; echo $? >"$out/$name.rc"
}
{ date -u +%FT%TZ; uname -r; nvidia-smi --version; } >"$out/machine.txt" 2>&1
run help nvidia-smi -h
run help-query-gpu nvidia-smi --help-query-gpu
run help-query-compute-apps nvidia-smi --help-query-compute-apps
run help-query-retired-pages nvidia-smi --help-query-retired-pages
run help-query-remapped-rows nvidia-smi --help-query-remapped-rows
run L nvidia-smi -L
run q nvidia-smi -q
for d in MEMORY UTILIZATION TEMPERATURE POWER CLOCK ECC PIDS PERFORMANCE; do run "q-d-$d" nvidia-smi -q -d "$d"; done
run q-d-all nvidia-smi -q -d MEMORY,UTILIZATION,TEMPERATURE,POWER,CLOCK,ECC,PIDS,PERFORMANCE
run q-i0 nvidia-smi -q -i 0 -d MEMORY
run dmon-help nvidia-smi dmon -h
run dmon nvidia-smi dmon -c 2
run dmon-s nvidia-smi dmon -s pucvmet -c 2
run dmon-s-d nvidia-smi dmon -s pucvmet -d 2 -c 2 -i 0
run dmon-o nvidia-smi dmon -o DT -c 1
run default nvidia-smi
# Every field the help lists, asked one at a time and all together.
fields=$(python3 - "$out/help-query-gpu.out" <<'PY'
import re, sys
names = []
for line in open(sys.argv[1]):
    if re.fullmatch(r'"[^"]+"( or "[^"]+")*\s*', line):  # a field line: "name" or "alias"
        names += re.findall(r'"([^"]+)"', line)
print(",".join(dict.fromkeys(names)))
PY
)
echo "$fields" | tr , '\n' >"$out/fields.txt"
run query-all nvidia-smi --query-gpu="$fields" --format=csv
run query-all-nounits nvidia-smi --query-gpu="$fields" --format=csv,noheader,nounits
run query-nounits-header nvidia-smi --query-gpu=index,memory.total,power.max_limit,fan.speed --format=csv,nounits
mkdir -p "$out/each"
while read -r f; do run "each/$f" nvidia-smi --query-gpu="$f" --format=csv; done <"$out/fields.txt"
run bad-field nvidia-smi --query-gpu=index,no.such.field --format=csv
run bad-format nvidia-smi --query-gpu=index --format=json
run no-format nvidia-smi --query-gpu=index
run bad-id nvidia-smi --query-gpu=index -i 7 --format=csv
run bad-loop nvidia-smi --query-gpu=index --format=csv -l x
run bad-loop-ms nvidia-smi --query-gpu=index --format=csv -lms 0
run no-fields nvidia-smi --query-gpu= --format=csv
run dmon-bad-select nvidia-smi dmon -s z -c 1
run dmon-bad-count nvidia-smi dmon -c x
run dmon-bad-delay nvidia-smi dmon -d 0 -c 1
run dmon-bad-option nvidia-smi dmon -o X -c 1
run dmon-o-t nvidia-smi dmon -o T -c 1
run q-bad-display nvidia-smi -q -d BOGUS
run mixed-modes nvidia-smi --query-gpu=index --format=csv -q
bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1)
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
run id-bus nvidia-smi --query-gpu=index,pci.bus_id --format=csv -i "$bus"
run id-shortbus nvidia-smi --query-gpu=index --format=csv -i "${bus#0000}"
run id-lowbus nvidia-smi --query-gpu=index --format=csv -i "$(echo "$bus" | tr A-F a-f)"
run id-uuid nvidia-smi --query-gpu=index --format=csv -i "$uuid"
run id-list nvidia-smi --query-gpu=index --format=csv -i 0,0
run file nvidia-smi --query-gpu=index,name --format=csv -f "$out/file-written.csv"
run loop timeout -s INT 2.5 nvidia-smi --query-gpu=timestamp,index,power.draw --format=csv -l 1
run loop-ms timeout -s INT 1.2 nvidia-smi --query-gpu=timestamp,index --format=csv -lms 500
run apps-empty nvidia-smi --query-compute-apps=pid,process_name,used_memory,gpu_uuid,gpu_bus_id,gpu_name --format=csv
# A process on the GPU, so the compute-apps query and -q -d PIDS have a row.
python3 -c 'import torch,time; x=torch.ones(1<<20,device="cuda"); print("ready",flush=True); time.sleep(20)' >"$out/torch.log" 2>&1 &
tp=$!
for _ in $(seq 100); do grep -q ready "$out/torch.log" 2>/dev/null && break; sleep 0.2; done
apps=$(sed -n 's/^"\([a-z_.]*\)".*/\1/p' "$out/help-query-compute-apps.out" | paste -sd,)
run apps nvidia-smi --query-compute-apps="$apps" --format=csv
run apps-nounits nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader,nounits
run q-d-PIDS-busy nvidia-smi -q -d PIDS
run default-busy nvidia-smi
run dmon-busy nvidia-smi dmon -s pucvmet -c 1
python3 - >"$out/pynvml.txt" 2>&1 <<'PY'
import pynvml, sys
print("pynvml", getattr(pynvml, "__version__", "?"), pynvml.__file__)
print(sorted(n for n in dir(pynvml) if not n.startswith("__")))
PY
kill $tp; wait $tp 2>/dev/null
pip list 2>/dev/null | grep -i -E "nvidia-ml|pynvml|gpustat|nvitop|amdsmi" >"$out/pip.txt"
echo done
