#!/bin/sh
# One pass on a GPU machine (docs/validation.md "Results", docs/validate.md): hipstack-info,
# hipstack-validate -r 3, the conformance suite, the kernels' planted-error checks, then the
# side-by-side comparison with torch. Reads only; changes no setting.
# Usage: gpu_pass.sh DIR [OUT]   DIR staged by stage_gpu_pass.sh; OUT receives validate-r3.json.
cd "${1:-.}" || exit 2
out=${2:-.}
export LD_LIBRARY_PATH="$PWD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== hipstack-info"; ./hipstack-info; echo "rc=$?"
echo "== hipstack-validate -r 3"
./hipstack-validate -r 3 --module-dir modules --config thresholds.json --json-file "$out/validate-r3.json"
echo "rc=$?"
echo "== conformance"; timeout 240 ./hip-conformance; echo "rc=$?"
echo "== vector_add --plant-error"; modules/vector_add --plant-error; echo "rc=$? (1 expected)"
echo "== memtest --plant-error"; modules/memtest --bytes 268435456 --plant-error; echo "rc=$? (1 expected)"
echo "== gemm --plant-error"; modules/gemm --size 512 --plant-error; echo "rc=$? (1 expected)"
echo "== stress --plant-error"; modules/stress --seconds 1 --plant-error; echo "rc=$? (1 expected)"
echo "== compare with torch"; timeout 300 python3 compare_with_torch.py modules; echo "rc=$?"
