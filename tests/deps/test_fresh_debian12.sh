#!/bin/bash
# A fresh Debian 12 machine gets everything the tests need from `scripts/deps.sh test` (what the
# README's scripts/test.sh runs first): deps.sh runs in a clean debootstrap chroot (a copy of the shared base of
# scripts/lib/debian_chroot.sh, with Debian's sources), then every tool of tests/deps/tools.txt must
# be there (check_tools.sh). A planted tool that no package has must be reported missing, so the
# check is shown to fail in every run.
#   test_fresh_debian12.sh SOURCE_DIR [CACHE_DIR]
# Needs root and deb.debian.org: skipped (77) without them. About 10 minutes when every package is
# downloaded; less with the host's apt cache (below). The shared base is debootstrapped once.
set -u
src=$(cd "$1" && pwd)
cache=${2:-$src/build/cache}
skip() { echo "SKIP: $1"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot, mount)"
for tool in debootstrap chroot mount flock tar; do
  command -v "$tool" > /dev/null || skip "$tool is not installed"
done
# shellcheck source=../lib/checks.sh
source "$src/tests/lib/checks.sh"
# shellcheck source=../../scripts/lib/debian_chroot.sh
source "$src/scripts/lib/debian_chroot.sh"
base=$(debian_chroot_base "$cache") || skip "debootstrap failed (no network to deb.debian.org?)"
work=$(mktemp -d /tmp/hipstack-fresh-debian12.XXXXXX) || exit 1
root=$work/root
trap 'debian_chroot_umount "$root"; rm -rf "$work"' EXIT
# A copy of the base: the shared tarball is never changed.
debian_chroot_unpack "$base" "$root" debian || { echo "FAIL - could not unpack $base"; exit 1; }
# Services are not started inside the chroot (dbus, systemd units of the installed packages).
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
# The host's downloaded packages (scripts/deps.sh test ran there first, in CI too): the chroot has
# the host's sources, so apt takes the same versions from this cache instead of downloading about
# 1.5 GB again. What is tested is what deps.sh installs on a fresh system, not the network; a
# package the host lacks is still downloaded.
if [ -d /var/cache/apt/archives ]; then
  mount --bind /var/cache/apt/archives "$root/var/cache/apt/archives"
fi
# What deps.sh reads: itself and the superbuild manifest's system packages.
mkdir -p "$root/src/scripts" "$root/src/superbuild/cmake"
cp "$src/scripts/deps.sh" "$root/src/scripts/"
cp "$src/superbuild/components.json" "$root/src/superbuild/"
cp "$src/superbuild/cmake/"*.cmake "$root/src/superbuild/cmake/"

start=$(date +%s)
rc=0
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive \
  /src/scripts/deps.sh test > "$work/deps.log" 2>&1 || rc=$?
echo "# scripts/deps.sh test in the chroot: exit $rc after $(($(date +%s) - start)) s"
if [ $rc = 0 ]; then
  pass "scripts/deps.sh test installs on a fresh Debian 12"
else
  tail -30 "$work/deps.log"
  fail "scripts/deps.sh test failed on a fresh Debian 12 (exit $rc)"
fi

# Every tool the tests call is installed.
rc=0
"$src/tests/deps/check_tools.sh" "$root" "$src/tests/deps/tools.txt" || rc=$?
[ $rc = 0 ] && pass "every tool of tests/deps/tools.txt is installed" || fail "tools missing after scripts/deps.sh test (above)"

# The check can fail: a tool no package provides, and a module no package provides, are reported.
printf 'command hipstack-no-such-tool  planted\npython3 hipstack_no_such_module  planted\n' > "$work/planted.txt"
out=$("$src/tests/deps/check_tools.sh" "$root" "$work/planted.txt") && rc=0 || rc=$?
[ $rc = 1 ] && grep -q "hipstack-no-such-tool hipstack_no_such_module" <<<"$out" &&
  pass "a planted missing command and module are reported" || fail "planted tools not reported (exit $rc): $out"
[ "$failures" = 0 ]
