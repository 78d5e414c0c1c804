#!/usr/bin/env bash
# A root of a release track's distribution with packages of that track's release installed from its
# own signed apt repository, as users install them (issue 18: the second oracle run from the track's
# packages, not from the distribution's layout).
#
#   track_root.sh OUTDIR CACHE_DIR ROOT PACKAGE...
#
# OUTDIR: a finished `superbuild/build.sh --track NAME OUTDIR` (its stage/manifest.json names the
# track, its repo/apt the repository). ROOT is replaced: the track's suite's minbase (made once into
# CACHE_DIR by scripts/lib/debian_chroot.sh), the repository copied into ROOT/srv/hipstack-apt, then
# apt-get install PACKAGE... (@RELEASE@ in a name is the release, e.g. hipstack-amd-runtime@RELEASE@).
# Nothing stays mounted after it. The archive here is a snapshot whose Release files are past
# Valid-Until: apt ignores that, in this root only.
# Exit 0 ready, 77 skip (not root, no debootstrap, deb.debian.org unreachable), 1 failure.
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: track_root.sh OUTDIR CACHE_DIR ROOT PACKAGE..." >&2; exit 2; }
out=$(realpath "$1") cache=$2 root=$(realpath -m "$3"); shift 3
top=$(realpath "$(dirname "$0")/../..")
skip() { echo "track_root.sh: SKIP: $*" >&2; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || skip "debootstrap is not installed"
[ -f "$out/packages/.done" ] && [ -f "$out/repo/apt/hipstack.gpg" ] ||
  { echo "track_root.sh: $out holds no finished superbuild with repositories" >&2; exit 1; }
read -r release track < <(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["release"], m["track"])' "$out/stage/manifest.json")
suite=$(python3 "$top/superbuild/scripts/tracks.py" "$top/superbuild/components.json" field "$track" suite)
# shellcheck source=../../scripts/lib/debian_chroot.sh
source "$top/scripts/lib/debian_chroot.sh"
# shellcheck source=apt_repo.sh
source "$top/tests/lib/apt_repo.sh"
base=$(debian_chroot_base "$cache" "$suite") || skip "debootstrap $suite failed (no network to deb.debian.org?)"
debian_chroot_umount "$root"
rm -rf "$root"
trap 'debian_chroot_umount "$root"' EXIT
debian_chroot_unpack "$base" "$root" own
echo 'Acquire::Check-Valid-Until "false";' > "$root/etc/apt/apt.conf.d/99snapshot"
mkdir -p "$root/srv"
cp -a "$out/repo/apt" "$root/srv/hipstack-apt"
hipstack_apt_source "$root" "$out/repo/apt/hipstack.gpg" file:///srv/hipstack-apt
wanted=("${@//@RELEASE@/$release}")
if ! chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive \
     sh -c "apt-get update -qq && apt-get install -y -q ${wanted[*]}" > "$root/srv/install.log" 2>&1; then
  tail -15 "$root/srv/install.log" >&2
  echo "track_root.sh: apt-get install ${wanted[*]} from track $track's repository failed (log: $root/srv/install.log)" >&2
  exit 1
fi
rm -rf "$root/srv/hipstack-apt"
echo "track_root.sh: $root: Debian $suite with ${wanted[*]} of track $track (release $release)"
