#!/bin/sh
# Copies what the NVIDIA benchmarks (bench/nvidia_daemon.sh, bench/cli_daemon.sh) and the NVML layout
# probe (bench/nvml_layout_probe.py) need from a build tree into one folder that can be carried to a
# GPU machine with no package registry: hipstack-smi, hipstack-smi-remote (--host), hipstack-smid,
# nvml_floor, c_call_cost, the scripts, and
# under DIR/lib every shared library they load except glibc's and the C++ runtime (the machine has
# newer ones). Debug information is stripped.
# Usage: bench/stage_nvidia.sh BUILD DIR
set -eu
build=$(cd "${1:?usage: $0 BUILD DIR}" && pwd) dir=${2:?usage: $0 BUILD DIR}
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$dir/lib" "$dir/bench"
cp "$build/smi-cli/hipstack-smi" "$build/libexec/hipstack/hipstack-smi-remote" "$build/monitor-daemon/hipstack-smid" \
   "$build/bench/nvml_floor" "$build/bench/c_call_cost" "$dir/"
cp "$src/bench/nvidia_daemon.sh" "$src/bench/daemon_cpu.sh" "$src/bench/cli_daemon.sh" "$src/bench/nvml_layout_probe.py" "$src/bench/nvidia_job.sh" "$dir/bench/"
for program in "$dir/hipstack-smi" "$dir/hipstack-smi-remote" "$dir/hipstack-smid" "$dir/nvml_floor" "$dir/c_call_cost"; do
  LD_LIBRARY_PATH="$build/smi-lib" ldd "$program" | awk '$3 ~ /^\// {print $3}'
done | sort -u | while read -r lib; do
  case $(basename "$lib") in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
    *) cp -L "$lib" "$dir/lib/" ;;
  esac
done
strip --strip-debug "$dir"/hipstack-smi "$dir"/hipstack-smi-remote "$dir"/hipstack-smid "$dir"/nvml_floor "$dir"/c_call_cost "$dir"/lib/*
