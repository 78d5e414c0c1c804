#!/usr/bin/env bash
# Builds hipstack's container images from a release's signed apt repository (docs/deploy.md):
#   containers/build.sh OUTDIR [--tag-prefix PREFIX] [IMAGE...]
# It runs `superbuild/build.sh OUTDIR` first (the whole release from these sources; a second or so when
# it is up to date), then installs the packages from OUTDIR/repo/apt (apt checks its signature); the
# version is OUTDIR/stage/manifest.json's. IMAGE is smi, exporter or
# dev (default: all three), tagged PREFIX/hipstack-IMAGE:VERSION (PREFIX default localhost):
#   hipstack-smi       hipstack-smi and hipstack-info
#   hipstack-exporter  hipstack-smid serving /metrics on port 9400, as the non-root user 999
#   hipstack-dev       headers, the HIP portability layer, the AMD HIP runtime and hipcc, validation
# The base is Debian 12 minbase from debootstrap (cached in OUTDIR/containers/; deb.debian.org is
# needed the first time and for the images' Debian dependencies), imported with podman. The images
# build with podman's chroot isolation (no container runtime needed) in docker format (it keeps
# HEALTHCHECK, which the OCI format drops).
set -euo pipefail
usage() { echo "usage: containers/build.sh OUTDIR [--tag-prefix PREFIX] [smi|exporter|dev]..." >&2; exit 2; }
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
"$top/superbuild/build.sh" "$out" > "$out.superbuild.log" 2>&1 ||
  { tail -20 "$out.superbuild.log" >&2; echo "containers/build.sh: superbuild/build.sh $out failed (log: $out.superbuild.log)" >&2; exit 1; }
repo=$out/repo/apt manifest=$out/stage/manifest.json
[ -f "$repo/dists/stable/InRelease" ] && [ -f "$manifest" ] ||
  { echo "containers/build.sh: superbuild/build.sh left no release in $out" >&2; exit 1; }
version=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$manifest")
revision=$(git -C "$top" rev-parse HEAD 2>/dev/null || echo unknown)
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)}
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
source_url=$(git -C "$top" config --get remote.origin.url 2>/dev/null || echo "https://hipstack.dev/source")

# The base image, named after its tarball's checksum: a new debootstrap makes a new base.
# shellcheck source=../scripts/lib/debian_chroot.sh
source "$top/scripts/lib/debian_chroot.sh"
tarball=$(debian_chroot_base "$out/containers") ||
  { echo "containers/build.sh: debootstrap failed (is deb.debian.org reachable?)" >&2; exit 1; }
base=localhost/hipstack-base:bookworm-$(sha256sum < "$tarball" | cut -c1-12)
if ! podman image exists "$base"; then
  podman import --quiet --change 'CMD ["/bin/bash"]' "$tarball" "$base" > /dev/null
fi

for image in "${images[@]}"; do
  tag=$prefix/hipstack-$image:$version
  echo "containers/build.sh: building $tag"
  start=$(date +%s)
  podman build --isolation=chroot --format docker --pull=never -f "$here/Containerfile.$image" \
    --volume "$repo:/srv/hipstack-apt:ro" \
    --build-arg BASE="$base" --build-arg HIPSTACK_VERSION="$version" --build-arg HIPSTACK_REVISION="$revision" \
    --build-arg HIPSTACK_CREATED="$created" --build-arg HIPSTACK_SOURCE="$source_url" \
    --tag "$tag" "$here" > "$out/containers/build-$image.log" 2>&1 ||
    { tail -30 "$out/containers/build-$image.log" >&2; echo "containers/build.sh: $tag failed (log: $out/containers/build-$image.log)" >&2; exit 1; }
  echo "containers/build.sh: $tag built in $(( $(date +%s) - start )) s ($(podman image inspect --format '{{.Size}}' "$tag" | numfmt --to=iec))"
done
