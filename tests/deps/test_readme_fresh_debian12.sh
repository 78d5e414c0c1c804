#!/bin/bash
# The README's two commands on a fresh Debian 12 machine: a clean clone of the repository's HEAD in a
# clean debootstrap chroot (a copy of the shared base of scripts/lib/debian_chroot.sh, Debian's
# sources, nothing else installed), then `scripts/run.sh` (must list the bundled capture's 8 GPUs)
# and `scripts/test.sh` (every CI step; it installs what it needs itself). This is CI on a machine
# where nobody installed anything by hand.
#   test_readme_fresh_debian12.sh SOURCE_DIR [CACHE_DIR]
# Needs root, deb.debian.org and about an hour of two cores: label `long`, run by hand before a
# submission that changes what is installed, reported in the session note (docs/testing.md).
# HIPSTACK_FRESH_KEEP=1 keeps the chroot (its path is printed) for a look after a failure.
set -u
src=$(cd "$1" && pwd)
cache=${2:-$src/build/cache}
skip() { echo "SKIP: $1"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot, mount)"
for tool in debootstrap chroot mount flock tar git; do
  command -v "$tool" > /dev/null || skip "$tool is not installed"
done
# shellcheck source=../lib/checks.sh
source "$src/tests/lib/checks.sh"
# shellcheck source=../../scripts/lib/debian_chroot.sh
source "$src/scripts/lib/debian_chroot.sh"
base=$(debian_chroot_base "$cache") || skip "debootstrap failed (no network to deb.debian.org?)"
work=$(mktemp -d /var/tmp/hipstack-readme-debian12.XXXXXX) || exit 1
root=$work/root
cleanup() {
  debian_chroot_umount "$root"
  if [ "${HIPSTACK_FRESH_KEEP:-0}" = 1 ]; then echo "# kept: $root"; else rm -rf "$work"; fi
}
trap cleanup EXIT
# The root a mount point of its own, as a machine's / is: the differential tests make their mount
# namespace private (`unshare -m --propagation private`), which fails with EINVAL on a chroot whose
# root is a plain folder.
mkdir -p "$root" && mount --bind "$root" "$root" || { echo "FAIL - could not bind $root onto itself"; exit 1; }
debian_chroot_unpack "$base" "$root" debian || { echo "FAIL - could not unpack $base"; exit 1; }
# What the tests use of a running machine: devices (/dev/shm, /dev/null, /dev/urandom),
# sysfs (read-only: run.sh looks for an AMD GPU there) and the network (resolv.conf was copied). Services are not started by package installs (policy-rc.d); the tests start their own.
mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev"
mount -t sysfs -o ro sysfs "$root/sys"
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
# The host's downloaded packages, as in deps.fresh-debian12: the versions are the ones the chroot's
# sources name; a package the host lacks is downloaded. What is tested is what the commands install.
[ -d /var/cache/apt/archives ] && mount --bind /var/cache/apt/archives "$root/var/cache/apt/archives"

# A clean clone of what is committed (what CI checks out), with no build tree and no ignored file.
# git itself is not in the base: the clone is made here and copied in.
git clone --quiet --no-hardlinks "$src" "$root/src" || { echo "FAIL - git clone $src"; exit 1; }
echo "# testing $(git -C "$root/src" log -1 --format='%h %s')"

in_chroot() {
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive \
    LANG=C.UTF-8 bash -c "cd /src && $1"
}

start=$(date +%s)
rc=0
in_chroot "scripts/run.sh list" > "$work/run.log" 2>&1 || rc=$?
echo "# scripts/run.sh list: exit $rc after $(($(date +%s) - start)) s"
gpus=$(grep -c '^ *[0-9]' "$work/run.log" || true)
if [ $rc = 0 ] && [ "$gpus" -ge 8 ] && grep -q "bundled constructed MI300X" "$work/run.log"; then
  pass "scripts/run.sh installs, builds and lists the bundled capture's GPUs"
else
  tail -30 "$work/run.log"
  fail "scripts/run.sh list on a fresh Debian 12 (exit $rc, $gpus GPU lines)"
fi

start=$(date +%s)
rc=0
in_chroot "scripts/test.sh" > "$work/test.log" 2>&1 || rc=$?
echo "# scripts/test.sh: exit $rc after $(($(date +%s) - start)) s"
grep -E '^== |tests passed|tests failed|ctest_required:' "$work/test.log"
if [ $rc = 0 ] && grep -q '^== all tests passed' "$work/test.log"; then
  pass "scripts/test.sh passes on a fresh Debian 12"
else
  tail -60 "$work/test.log"
  fail "scripts/test.sh on a fresh Debian 12 (exit $rc)"
fi
[ "$failures" = 0 ]
