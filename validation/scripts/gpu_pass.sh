#!/bin/sh
# One pass on a GPU machine (docs/validation.md "Results", docs/validate.md): hipstack-info,
# hipstack-validate -r 3, the conformance suite, the kernels' planted-error checks, then the
# side-by-side comparison with torch. Reads only; changes no setting.
# Usage: gpu_pass.sh DIR [OUT]   DIR staged by stage_gpu_pass.sh; OUT receives validate-r3.json.
# Every step runs and prints its output and "rc=N"; the pass exits 1 when any step's exit status is
# not the one expected (0, or 1 for a planted error; a skip, 77, is no pass either), naming them all.
cd "${1:-.}" || exit 2
out=${2:-.}
export LD_LIBRARY_PATH="$PWD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
failed=""
# step EXPECTED_RC TITLE COMMAND...
step() {
  expected=$1 title=$2
  shift 2
  echo "== $title"
  "$@"
  rc=$?
  if [ "$rc" -eq "$expected" ]; then
    echo "rc=$rc"
  else
    echo "rc=$rc (expected $expected): FAILED"
    failed="$failed
  - $title: rc=$rc, expected $expected"
  fi
}
step 0 "nvidia-smi" nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
step 0 "hipstack-info" ./hipstack-info
step 0 "hipstack-validate -r 3" ./hipstack-validate -r 3 --module-dir modules --config thresholds.json \
  --json-file "$out/validate-r3.json"
step 0 "conformance" timeout 240 ./hip-conformance
step 1 "vector_add --plant-error" modules/vector_add --plant-error
step 1 "memtest --plant-error" modules/memtest --bytes 268435456 --plant-error
step 1 "gemm --plant-error" modules/gemm --size 512 --plant-error
step 1 "stress --plant-error" modules/stress --seconds 1 --plant-error
step 0 "compare with torch" timeout 300 python3 compare_with_torch.py modules
if [ -n "$failed" ]; then
  echo "== gpu_pass.sh: FAILED:$failed"
  exit 1
fi
echo "== gpu_pass.sh: every step gave its expected exit status"
