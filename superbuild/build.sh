#!/usr/bin/env bash
# Builds and stages every component of superbuild/components.json of one release track into OUTDIR,
# then makes its packages and repositories (docs/superbuild.md):
#   superbuild/build.sh [--track NAME] [--build-root] OUTDIR [-DVAR=VALUE ...]
#   superbuild/build.sh --list-tracks
# OUTDIR/build      the superbuild's CMake build tree (one ExternalProject per component)
# OUTDIR/downloads  the .debs and tarballs, by SHA-256 (reruns need no network)
# OUTDIR/stage      the staged prefix, OUTDIR/stage/opt/hipstack-X.Y.Z[SUFFIX], and OUTDIR/stage/manifest.json
# OUTDIR/root       (a track of another distribution than this machine's) its debootstrap build root
# --track: the release track (default: the manifest's default, debian12). A track whose suite is not
# this machine's builds inside its own Debian root of that suite (superbuild/scripts/build_root.sh),
# so that nothing of this machine's libraries leaks into it; --build-root builds in such a root whatever
# this machine is. One OUTDIR holds one track.
# -D options go to the superbuild's configure, e.g. -DHIPSTACK_SUPERBUILD_COMPONENTS=hipcc.
# A rerun with nothing changed does nothing but check (every step is stamped); the configure runs
# only the first time, when -D options are given, or (through ninja) when the manifest or a
# CMakeLists.txt changed. Then, when superbuild/package.sh exists, it runs as: package.sh OUTDIR.
set -euo pipefail
here=$(dirname "$(realpath "$0")")
usage() {
  echo "usage: superbuild/build.sh [--track NAME] [--build-root] OUTDIR [-DVAR=VALUE ...]" >&2
  echo "       superbuild/build.sh --list-tracks" >&2
  exit 2
}
manifest=$here/components.json
track=""
in_root=0
while [ $# -gt 0 ]; do
  case $1 in
    --list-tracks) exec python3 "$here/scripts/tracks.py" "$manifest" list ;;
    --track) [ $# -ge 2 ] || usage; track=$2; shift 2 ;;
    --track=*) track=${1#--track=}; shift ;;
    --build-root) in_root=1; shift ;;
    -*) usage ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || usage
out=$(realpath -m "$1"); shift
for arg in "$@"; do
  [[ $arg == -D?*=* ]] || { echo "superbuild/build.sh: '$arg' is not a -DVAR=VALUE option" >&2; exit 2; }
  [[ $arg == -DHIPSTACK_SUPERBUILD_TRACK=* ]] && { echo "superbuild/build.sh: choose the track with --track" >&2; exit 2; }
done
command -v python3 >/dev/null || { echo "superbuild/build.sh: missing python3: run scripts/deps.sh superbuild" >&2; exit 1; }
[ -n "$track" ] || track=$(python3 "$here/scripts/tracks.py" "$manifest" default)
suite=$(python3 "$here/scripts/tracks.py" "$manifest" field "$track" suite) || exit 2
# One OUTDIR, one track: its prefix, packages and repositories are that track's.
if [ -f "$out/track" ] && [ "$(cat "$out/track")" != "$track" ]; then
  echo "superbuild/build.sh: $out holds track '$(cat "$out/track")', not '$track': use another OUTDIR" >&2
  exit 2
fi

# In-tree git: the last commit's time is every date in the build (reproducible), unless given.
if [ -z "${SOURCE_DATE_EPOCH:-}" ] && [ -e "$here/../.git" ] && command -v git >/dev/null &&
   git -C "$here/.." rev-parse >/dev/null 2>&1; then
  SOURCE_DATE_EPOCH=$(git -C "$here/.." log -1 --format=%ct)
fi
host_suite=$( . /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}" )
if [ "${HIPSTACK_BUILD_ROOT_TRACK:-}" != "$track" ] && { [ $in_root = 1 ] || [ "$suite" != "$host_suite" ]; }; then
  [ -n "${SOURCE_DATE_EPOCH:-}" ] || { echo "superbuild/build.sh: set SOURCE_DATE_EPOCH (no git checkout to read it from)" >&2; exit 1; }
  mkdir -p "$out" && echo "$track" > "$out/track"
  exec bash "$here/scripts/build_root.sh" "$track" "$out" "$SOURCE_DATE_EPOCH" "$@"
fi

missing=()
tools=(cmake ninja patchelf apt-get dpkg-deb)
[ -z "${SOURCE_DATE_EPOCH:-}" ] && tools+=(git)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "superbuild/build.sh: missing ${missing[*]}: run scripts/deps.sh superbuild $track" >&2
  exit 1
fi
[ -n "${SOURCE_DATE_EPOCH:-}" ] && export SOURCE_DATE_EPOCH

start=$(date +%s%N)
mkdir -p "$out" && echo "$track" > "$out/track"
if [ ! -f "$out/build/build.ninja" ] || [ $# -gt 0 ]; then
  cmake -S "$here" -B "$out/build" -G Ninja -DHIPSTACK_SUPERBUILD_TRACK="$track" "$@"
fi
cmake --build "$out/build"
if [ -f "$here/package.sh" ]; then
  bash "$here/package.sh" "$out"
fi
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
printf 'superbuild: track %s: %s staged in %d.%03d s\n' "$track" "$out/stage" $((elapsed / 1000)) $((elapsed % 1000))
