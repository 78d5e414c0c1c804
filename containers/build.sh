#!/usr/bin/env bash
# Builds hipstack's container images from a release's signed apt repository (docs/deploy.md):
#   containers/build.sh [--track NAME] OUTDIR [--tag-prefix PREFIX] [IMAGE...]
# It runs `superbuild/build.sh [--track NAME] OUTDIR` first (the whole release of that track from these
# sources; a second or so when it is up to date), then installs the packages from OUTDIR/repo/apt (apt
# checks its signature); the release (version and track suffix) is OUTDIR/stage/manifest.json's. IMAGE
# is smi, exporter or dev (default: all three), tagged PREFIX/hipstack-IMAGE:RELEASE (PREFIX default
# localhost), e.g. hipstack-dev:0.1.0 (debian12) and hipstack-dev:0.1.0-rocm7.2 (current):
#   hipstack-smi       hipstack-smi and hipstack-info
#   hipstack-exporter  hipstack-smid serving /metrics on port 9400, as the non-root user 999
#   hipstack-dev       headers, the HIP portability layer, the AMD HIP runtime and hipcc, validation
# The base is a minbase of the track's suite from debootstrap (Debian 12, or sid for current; cached
# in OUTDIR/containers/; deb.debian.org is needed the first time and for the images' Debian
# dependencies), imported with podman. The images
# build with podman's chroot isolation (no container runtime needed) in docker format (it keeps
# HEALTHCHECK, which the OCI format drops).
set -euo pipefail
usage() { echo "usage: containers/build.sh [--track NAME] OUTDIR [--tag-prefix PREFIX] [smi|exporter|dev]..." >&2; exit 2; }
track_args=()
if [ $# -ge 2 ] && [ "$1" = --track ]; then track_args=(--track "$2"); shift 2; fi
[ $# -ge 1 ] && [[ $1 != -* ]] || usage
out=$(realpath -m "$1"); shift
prefix=localhost images=()
while [ $# -gt 0 ]; do
  case $1 in
    --tag-prefix) [ $# -ge 2 ] && [ -n "$2" ] || usage; prefix=${2%/}; shift 2 ;;
    smi|exporter|dev) images+=("$1"); shift ;;
    *) echo "containers/build.sh: unknown image or option '$1' (images: smi, exporter, dev)" >&2; exit 2 ;;
  esac
done
[ ${#images[@]} -gt 0 ] || images=(smi exporter dev)
here=$(dirname "$(realpath "$0")")
top=$(dirname "$here")
for tool in podman debootstrap python3; do
  command -v "$tool" >/dev/null || { echo "containers/build.sh: $tool is not installed (scripts/deps.sh containers)" >&2; exit 1; }
done
# The release first: superbuild/build.sh makes it, or finds it up to date (about a second), so the
# images always hold the packages of these sources.
"$top/superbuild/build.sh" "${track_args[@]}" "$out" > "$out.superbuild.log" 2>&1 ||
  { tail -20 "$out.superbuild.log" >&2; echo "containers/build.sh: superbuild/build.sh $out failed (log: $out.superbuild.log)" >&2; exit 1; }
repo=$out/repo/apt manifest=$out/stage/manifest.json
[ -f "$repo/dists/stable/InRelease" ] && [ -f "$manifest" ] ||
  { echo "containers/build.sh: superbuild/build.sh left no release in $out" >&2; exit 1; }
read -r version release track < <(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["version"], m.get("release", m["version"]), m.get("track", "debian12"))' "$manifest")
suite=$(python3 "$top/superbuild/scripts/tracks.py" "$top/superbuild/components.json" field "$track" suite)
# Debian 12's own archive for its track; sid's for the others (their packages need it).
sources=debian.sources
[ "$suite" = bookworm ] || sources=debian-$suite.sources
[ -f "$here/$sources" ] || { echo "containers/build.sh: no containers/$sources for track $track" >&2; exit 1; }
revision=$(git -C "$top" rev-parse HEAD 2>/dev/null || echo unknown)
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)}
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
source_url=$(git -C "$top" config --get remote.origin.url 2>/dev/null || echo "https://hipstack.dev/source")

# The base image, named after its tarball's checksum: a new debootstrap makes a new base.
# shellcheck source=../scripts/lib/debian_chroot.sh
source "$top/scripts/lib/debian_chroot.sh"
tarball=$(debian_chroot_base "$out/containers" "$suite") ||
  { echo "containers/build.sh: debootstrap failed (is deb.debian.org reachable?)" >&2; exit 1; }
base=localhost/hipstack-base:$suite-$(sha256sum < "$tarball" | cut -c1-12)
if ! podman image exists "$base"; then
  podman import --quiet --change 'CMD ["/bin/bash"]' "$tarball" "$base" > /dev/null
fi

# The archive these machines reach is a snapshot whose Release files are past their Valid-Until (sid's
# carry one; Debian 12's do not): apt ignores it during the build only, the images do not keep it.
apt_build_options="-o Acquire::Check-Valid-Until=false"
for image in "${images[@]}"; do
  tag=$prefix/hipstack-$image:$release
  echo "containers/build.sh: building $tag"
  start=$(date +%s)
  podman build --isolation=chroot --format docker --pull=never -f "$here/Containerfile.$image" \
    --volume "$repo:/srv/hipstack-apt:ro" \
    --build-arg BASE="$base" --build-arg HIPSTACK_VERSION="$version" --build-arg HIPSTACK_REVISION="$revision" \
    --build-arg DEBIAN_SOURCES="$sources" --build-arg APT_BUILD_OPTIONS="$apt_build_options" \
    --build-arg HIPSTACK_CREATED="$created" --build-arg HIPSTACK_SOURCE="$source_url" \
    --tag "$tag" "$here" > "$out/containers/build-$image.log" 2>&1 ||
    { tail -30 "$out/containers/build-$image.log" >&2; echo "containers/build.sh: $tag failed (log: $out/containers/build-$image.log)" >&2; exit 1; }
  echo "containers/build.sh: $tag built in $(( $(date +%s) - start )) s ($(podman image inspect --format '{{.Size}}' "$tag" | numfmt --to=iec))"
done
