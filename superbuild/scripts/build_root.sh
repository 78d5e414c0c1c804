#!/usr/bin/env bash
# Builds a release track inside its own Debian root (superbuild/build.sh runs this for a track whose
# suite is not the machine's, or with --build-root): nothing of the machine's own libraries, compilers
# or ROCm can leak into the track's packages (docs/superbuild.md).
#   build_root.sh TRACK OUTDIR SOURCE_DATE_EPOCH [-DVAR=VALUE ...]
# OUTDIR/root is made once: debootstrap of the track's suite, with the track's apt_suites in its
# sources (e.g. sid and experimental). Each run then mounts the repository read-only at /src and OUTDIR
# at /out, and runs there, as root: scripts/deps.sh superbuild TRACK; superbuild/build.sh --track TRACK
# /out. The repository is never written to. HIPSTACK_SIGNING_KEYRING, when set, is mounted at /keyring.
# HIPSTACK_DEBIAN_MIRROR: the archive (default http://deb.debian.org/debian).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: build_root.sh TRACK OUTDIR SOURCE_DATE_EPOCH [-DVAR=VALUE ...]" >&2; exit 2; }
track=$1 out=$2 epoch=$3; shift 3
here=$(dirname "$(realpath "$0")")
top=$(realpath "$here/../..")
manifest=$top/superbuild/components.json
die() { echo "superbuild/build.sh: track '$track': $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "it builds in a Debian root of its own (debootstrap, chroot): run as root"
command -v debootstrap >/dev/null || die "debootstrap is not installed (scripts/deps.sh superbuild)"
suite=$(python3 "$here/tracks.py" "$manifest" field "$track" suite)
read -r -a apt_suites <<< "$(python3 "$here/tracks.py" "$manifest" field "$track" apt_suites)"
mirror=${HIPSTACK_DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$out/root

if [ ! -f "$root/.hipstack-build-root" ]; then
  echo "superbuild: track '$track': making its $suite build root in $root (debootstrap)"
  rm -rf "$root"
  mkdir -p "$out"
  debootstrap --variant=minbase "$suite" "$root" "$mirror" > "$out/debootstrap.log" 2>&1 ||
    { tail -5 "$out/debootstrap.log" >&2; die "debootstrap $suite failed (see $out/debootstrap.log)"; }
  : > "$root/etc/apt/sources.list"
  for s in "${apt_suites[@]}"; do
    echo "deb $mirror $s main"
  done > "$root/etc/apt/sources.list.d/hipstack-track.list"
  rm -f "$root/etc/apt/sources.list.d/debian.sources"
  # Snapshots of the archive (a mirror, or the one these machines reach) serve Release files past their
  # Valid-Until; the packages are still checked against the signed indexes, and every pinned .deb by
  # its SHA-256. In this root only.
  echo 'Acquire::Check-Valid-Until "false";' > "$root/etc/apt/apt.conf.d/99hipstack-snapshot"
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  echo "$track $suite ${apt_suites[*]}" > "$root/.hipstack-build-root"
fi

mkdir -p "$root/src" "$root/out" "$root/proc" "$root/dev/pts" "$root/keyring"
mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount "${mounts[$i]}" 2>/dev/null || umount -l "${mounts[$i]}" || true; done
}
trap cleanup EXIT
mount -t proc proc "$root/proc" && mounts+=("$root/proc")
mount --bind /dev/pts "$root/dev/pts" && mounts+=("$root/dev/pts")   # apt and dpkg log the terminal there
mount --bind "$top" "$root/src" && mounts+=("$root/src")
mount -o remount,ro,bind "$root/src"
mount --bind "$out" "$root/out" && mounts+=("$root/out")
keyring_env=()
if [ -n "${HIPSTACK_SIGNING_KEYRING:-}" ]; then
  mount --bind "$HIPSTACK_SIGNING_KEYRING" "$root/keyring" && mounts+=("$root/keyring")
  keyring_env=(HIPSTACK_SIGNING_KEYRING=/keyring)
fi
quoted=""
[ $# -eq 0 ] || quoted=$(printf ' %q' "$@")
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
  SOURCE_DATE_EPOCH="$epoch" HIPSTACK_BUILD_ROOT_TRACK="$track" "${keyring_env[@]}" \
  bash -c "set -e; cd /src; scripts/deps.sh superbuild $track; superbuild/build.sh --track $track /out$quoted"
