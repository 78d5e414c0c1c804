#!/bin/sh
# One pass on a GPU machine: the conformance suite, the three kernels (stream at every unroll), then
# torch's copy bandwidths for comparison (docs/validation.md "Results"). Reads only; changes no setting.
# Usage: gpu_pass.sh DIR   where DIR holds hip-conformance, vector_add, stream, transfer and
#        torch_bandwidth.py (stage them with: cp BUILD/validation/hip/tests/hip-conformance
#        BUILD/validation/kernels/{vector_add,stream,transfer} validation/scripts/torch_bandwidth.py DIR).
cd "${1:-.}" || exit 2
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== conformance"; timeout 240 ./hip-conformance; echo "rc=$?"
echo "== vector_add"; ./vector_add --json; echo "rc=$?"
echo "== vector_add --plant-error"; ./vector_add --plant-error; echo "rc=$? (1 expected)"
for u in 1 2 4 8; do echo "== stream --unroll $u"; ./stream --unroll "$u"; echo "rc=$?"; done
echo "== stream --json"; ./stream --json; echo "rc=$?"
echo "== transfer"; ./transfer --json; echo "rc=$?"
echo "== torch"; timeout 120 python3 torch_bandwidth.py; echo "rc=$?"
