#!/usr/bin/env bash
# Builds and stages every component of superbuild/components.json into OUTDIR (docs/superbuild.md):
#   superbuild/build.sh OUTDIR [-DVAR=VALUE ...]
# OUTDIR/build      the superbuild's CMake build tree (one ExternalProject per component)
# OUTDIR/downloads  the .debs and tarballs, by SHA-256 (reruns need no network)
# OUTDIR/stage      the staged prefix, OUTDIR/stage/opt/hipstack-X.Y.Z, and OUTDIR/stage/manifest.json
# -D options go to the superbuild's configure, e.g. -DHIPSTACK_SUPERBUILD_COMPONENTS=hipcc.
# A rerun with nothing changed does nothing but check (every step is stamped); the configure runs
# only the first time, when -D options are given, or (through ninja) when the manifest or a
# CMakeLists.txt changed. Then, when superbuild/package.sh exists, it runs as: package.sh OUTDIR.
set -euo pipefail
if [ $# -lt 1 ] || [[ $1 == -* ]]; then
  echo "usage: superbuild/build.sh OUTDIR [-DVAR=VALUE ...]" >&2
  exit 2
fi
out=$(realpath -m "$1"); shift
for arg in "$@"; do
  [[ $arg == -D?*=* ]] || { echo "superbuild/build.sh: '$arg' is not a -DVAR=VALUE option" >&2; exit 2; }
done
here=$(dirname "$(realpath "$0")")
missing=()
# In a git checkout, git reads the last commit's time (below) unless SOURCE_DATE_EPOCH is given.
tools=(cmake ninja patchelf apt-get dpkg-deb)
[ -z "${SOURCE_DATE_EPOCH:-}" ] && [ -e "$here/../.git" ] && tools+=(git)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "superbuild/build.sh: missing ${missing[*]}: run scripts/deps.sh superbuild" >&2
  exit 1
fi
# One timestamp for everything built (reproducible builds): the last commit's, unless given.
if [ -z "${SOURCE_DATE_EPOCH:-}" ] && git -C "$here/.." rev-parse >/dev/null 2>&1; then
  SOURCE_DATE_EPOCH=$(git -C "$here/.." log -1 --format=%ct)
  export SOURCE_DATE_EPOCH
fi

start=$(date +%s%N)
if [ ! -f "$out/build/build.ninja" ] || [ $# -gt 0 ]; then
  cmake -S "$here" -B "$out/build" -G Ninja "$@"
fi
cmake --build "$out/build"
if [ -f "$here/package.sh" ]; then
  bash "$here/package.sh" "$out"
fi
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
printf 'superbuild: %s staged in %d.%03d s\n' "$out/stage" $((elapsed / 1000)) $((elapsed % 1000))
