#!/bin/sh
# One pass on a GPU machine: the conformance suite, the kernels (stream at every unroll), then the
# side-by-side comparison with torch (docs/validation.md "Results"). Reads only; changes no setting.
# Usage: gpu_pass.sh DIR   where DIR holds hip-conformance, vector_add, stream, transfer, gemm and
#        compare_with_torch.py (stage them with: cp BUILD/validation/hip/tests/hip-conformance
#        BUILD/validation/kernels/{vector_add,stream,transfer,gemm} validation/scripts/compare_with_torch.py DIR).
cd "${1:-.}" || exit 2
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== conformance"; timeout 240 ./hip-conformance; echo "rc=$?"
echo "== vector_add"; ./vector_add --json; echo "rc=$?"
echo "== vector_add --plant-error"; ./vector_add --plant-error; echo "rc=$? (1 expected)"
for u in 1 2 4 8; do echo "== stream --unroll $u"; ./stream --unroll "$u"; echo "rc=$?"; done
echo "== stream --json"; ./stream --json; echo "rc=$?"
echo "== transfer"; ./transfer --json; echo "rc=$?"
echo "== gemm"; ./gemm --precision fp32,bf16,fp64; echo "rc=$?"
echo "== gemm --backend tiled"; ./gemm --backend tiled --precision fp32,bf16,fp64; echo "rc=$?"
echo "== gemm --plant-error"; ./gemm --size 512 --plant-error; echo "rc=$? (1 expected)"
echo "== compare with torch"; timeout 300 python3 compare_with_torch.py .; echo "rc=$?"
