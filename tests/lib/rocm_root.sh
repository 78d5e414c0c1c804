#!/usr/bin/env bash
# A Debian sid root with pinned packages of the current ROCm set from experimental (issue 18): the
# second AMD oracle's rocm-smi (tests/differential/rocm-smi-7.packages) and the HIP compiler of the
# porting test (tests/current/hip-7.packages). Debian 12 (the host) never sees these packages: they
# live only in this root.
#
#   rocm_root.sh PACKAGES CACHE_DIR ROOT
#
# PACKAGES: Debian package names, one a line (# comments), each pinned (version, .deb SHA-256) by the
# current release track of superbuild/components.json: one place holds the set's versions. Made once
# (debootstrap sid, then apt-get install of the pinned versions from experimental, about a minute)
# into CACHE_DIR/<PACKAGES name>-<hash of the pins>-sid.tar, reused after (concurrent callers wait on a
# lock); then unpacked into ROOT, which is replaced. Each fetched .deb's SHA-256 is checked against its
# pin: a download that differs is refused. The archive here is a snapshot whose Release files are past
# Valid-Until: apt ignores that, in this root only.
# Exit 0 ready, 77 skip (not root, no debootstrap, deb.debian.org unreachable), 1 failure.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: rocm_root.sh PACKAGES CACHE_DIR ROOT" >&2; exit 2; }
list=$(realpath "$1") cache=$2 root=$3
[ -f "$list" ] || { echo "rocm_root.sh: no package list $1" >&2; exit 2; }
top=$(realpath "$(dirname "$0")/../..")
mkdir -p "$cache"
pins=$(mktemp "$cache/pins.XXXXXX")
trap 'rm -f "$pins"' EXIT
mapfile -t packages < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$list" | awk '{ print $1 }')
python3 "$top/superbuild/scripts/tracks.py" "$top/superbuild/components.json" pins current "${packages[@]}" > "$pins" || exit 2
name=$(basename "$list" .packages)-$(sha256sum < "$pins" | cut -c1-12)
skip() { echo "rocm_root.sh: SKIP: $*" >&2; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || skip "debootstrap is not installed"

tarball=$cache/$name-sid.tar
(
  flock 9
  [ -s "$tarball" ] && exit 0
  work=$(mktemp -d "$cache/$name.XXXXXX")
  trap 'umount "$work/root/proc" 2>/dev/null || true; rm -rf "$work"' EXIT
  if ! debootstrap --variant=minbase sid "$work/root" http://deb.debian.org/debian > "$work/debootstrap.log" 2>&1; then
    tail -5 "$work/debootstrap.log" >&2
    exit 77
  fi
  cp /etc/resolv.conf "$work/root/etc/resolv.conf"
  echo "deb http://deb.debian.org/debian experimental main" > "$work/root/etc/apt/sources.list.d/experimental.list"
  mount -t proc proc "$work/root/proc"
  # The archive served here is a snapshot whose Release files are past their Valid-Until.
  apt_in_root() { chroot "$work/root" env DEBIAN_FRONTEND=noninteractive apt-get -o Acquire::Check-Valid-Until=false "$@"; }
  apt_in_root update -qq > "$work/apt.log" 2>&1 || { tail -5 "$work/apt.log" >&2; exit 77; }
  mapfile -t wanted < <(awk '!/^#/ && NF == 3 { print $1 "=" $2 }' "$pins")
  if ! apt_in_root install -y -q --no-install-recommends -t experimental "${wanted[@]}" > "$work/apt.log" 2>&1; then
    tail -10 "$work/apt.log" >&2
    echo "rocm_root.sh: could not install ${wanted[*]} in the sid root" >&2
    exit 1
  fi
  while read -r package version sha; do
    [[ $package == \#* || -z $package ]] && continue
    deb=$(compgen -G "$work/root/var/cache/apt/archives/${package}_${version//:/%3a}_*.deb" || true)
    [ -n "$deb" ] || { echo "rocm_root.sh: apt fetched no $package $version" >&2; exit 1; }
    got=$(sha256sum "$deb" | cut -d' ' -f1)
    [ "$got" = "$sha" ] || { echo "rocm_root.sh: $(basename "$deb") has SHA-256 $got, pinned $sha: refused" >&2; exit 1; }
  done < "$pins"
  umount "$work/root/proc"
  rm -rf "$work/root/var/cache/apt/archives/"*.deb "$work/root/var/lib/apt/lists/"*
  tar -C "$work/root" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
) 9> "$cache/$name-sid.lock"

rm -rf "$root"
mkdir -p "$root"
tar -C "$root" -xf "$tarball"
while read -r package version _; do
  [[ $package == \#* || -z $package ]] && continue
  # shellcheck disable=SC2016  # dpkg-query's format, not a shell expansion
  got=$(chroot "$root" dpkg-query -W -f='${Version}' "$package")
  [ "$got" = "$version" ] || { echo "rocm_root.sh: $root holds $package $got, not $version" >&2; exit 1; }
done < "$pins"
echo "rocm_root.sh: $root holds $(awk '!/^#/ && NF == 3 { printf "%s %s, ", $1, $2 }' "$pins" | sed 's/, $//')"
