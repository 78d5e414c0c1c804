#!/bin/sh
# Copies what a hardware pass needs from a build tree into one folder that can be carried to a GPU
# machine with no compiler: the kernel programs (under modules/), hip-conformance, hipstack-validate,
# hipstack-info, libhipstack-smi (run with LD_LIBRARY_PATH=DIR; fmt is compiled in), the thresholds and the
# scripts (debug information stripped). The nvcc programs link cudart statically: they need only the driver there.
# Usage: stage_gpu_pass.sh BUILD DIR
set -eu
build=$1 dir=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dir/modules"
for k in vector_add stream transfer gemm memtest stress p2p; do cp "$build/validation/kernels/$k" "$dir/modules/"; done
cp "$build/validation/hip/tests/hip-conformance" "$build/validation/validate/hipstack-validate" \
   "$build/smi-cli/hipstack-info" "$src/validation/validate/thresholds.json" \
   "$src/validation/scripts/compare_with_torch.py" "$src/validation/scripts/gpu_pass.sh" "$dir/"
cp -L "$build/smi-lib/libhipstack-smi.so.0" "$dir/"
# Debug information is not needed there and would make the folder several times larger.
strip --strip-debug "$dir"/hipstack-validate "$dir"/hipstack-info "$dir"/hip-conformance "$dir"/lib*.so* "$dir"/modules/*
