#!/usr/bin/env bash
# Quick start: install what is needed, build, and run hipstack-smi. On a machine without an AMD GPU
# it reads the bundled 8-GPU MI300X capture instead (captures/constructed/, marked constructed).
# Usage: scripts/run.sh [hipstack-smi arguments...]   (default: list, then metric)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh" build
cmake -S "$top" -B "$top/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHIPSTACK_BUILD_TESTS=OFF >/dev/null
cmake --build "$top/build" --target hipstack-smi >/dev/null
smi="$top/build/smi-cli/hipstack-smi"
root_args=()
if [ -z "${HIPSTACK_SYSFS_ROOT:-}" ] && ! grep -qs amdgpu /sys/class/drm/card*/device/uevent; then
  root_args=(--sysfs-root "$top/captures/constructed/mi300x-8gpu-spx-nps1/sys")
  echo "No AMD GPU here: reading the bundled constructed MI300X node capture." >&2
fi
if [ $# -eq 0 ]; then
  "$smi" list "${root_args[@]}"
  echo
  exec "$smi" metric -m temperature_junction,power_current,clock_sclk,clock_mclk,gpu_busy,vram_used "${root_args[@]}"
fi
exec "$smi" "$@" "${root_args[@]}"
