#!/usr/bin/env bash
# The second AMD oracle's root: Debian sid with rocm-smi 7.2.4 from experimental (the current
# ROCm set of issue 18; it decodes gpu_metrics v1.4 to v1.8 and MI300X partitions, which 5.2.3
# cannot). Debian 12 (the host) never sees these packages: they live only in this root.
#
#   oracle_root.sh CACHE_DIR ROOT
#
# Made once (debootstrap sid, then apt-get install of the pinned versions, about 2 minutes) into
# CACHE_DIR/rocm-smi-7.2.4-sid.tar, reused after (concurrent callers wait on a lock); then unpacked
# into ROOT, which is replaced. The pins (rocm-smi-7.pins: package, version, the .deb's SHA-256)
# are checked on the .debs apt fetched: a download that differs is refused.
# Exit 0 ready, 77 skip (not root, no debootstrap, deb.debian.org unreachable), 1 failure.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: oracle_root.sh CACHE_DIR ROOT" >&2; exit 2; }
cache=$1 root=$2
here=$(dirname "$(realpath "$0")")
pins=$here/rocm-smi-7.pins
skip() { echo "oracle_root.sh: SKIP: $*" >&2; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || skip "debootstrap is not installed"

tarball=$cache/rocm-smi-7.2.4-sid.tar
mkdir -p "$cache"
(
  flock 9
  [ -s "$tarball" ] && exit 0
  work=$(mktemp -d "$cache/oracle.XXXXXX")
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
    echo "oracle_root.sh: could not install ${wanted[*]} in the sid root" >&2
    exit 1
  fi
  while read -r package version sha; do
    [[ $package == \#* || -z $package ]] && continue
    deb=$(compgen -G "$work/root/var/cache/apt/archives/${package}_${version//:/%3a}_*.deb" || true)
    [ -n "$deb" ] || { echo "oracle_root.sh: apt fetched no $package $version" >&2; exit 1; }
    got=$(sha256sum "$deb" | cut -d' ' -f1)
    [ "$got" = "$sha" ] || { echo "oracle_root.sh: $(basename "$deb") has SHA-256 $got, pinned $sha: refused" >&2; exit 1; }
  done < "$pins"
  umount "$work/root/proc"
  rm -rf "$work/root/var/cache/apt/archives/"*.deb "$work/root/var/lib/apt/lists/"*
  tar -C "$work/root" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
) 9> "$cache/rocm-smi-7.2.4-sid.lock"

rm -rf "$root"
mkdir -p "$root"
tar -C "$root" -xf "$tarball"
# shellcheck disable=SC2016  # dpkg-query's format, not a shell expansion
version=$(chroot "$root" dpkg-query -W -f='${Version}' rocm-smi)
echo "oracle_root.sh: $root holds rocm-smi $version"
