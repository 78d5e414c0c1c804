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
# HIPSTACK_FRESH_BUSY_CORE=1 keeps one core busy beside both commands (a shell loop, stopped by its PID
# at the end), as other work does on a shared machine: how issue 38's margins are measured.
set -u
src=$(cd "$1" && pwd)
cache=${2:-$src/build/cache}
# shellcheck source=../lib/checks.sh
source "$src/tests/lib/checks.sh"
# shellcheck source=../../scripts/lib/debian_chroot.sh
source "$src/scripts/lib/debian_chroot.sh"
# shellcheck source=../lib/fresh_clone_chroot.sh
source "$src/tests/lib/fresh_clone_chroot.sh"
fresh_clone_chroot "$src" "$cache" hipstack-readme-debian12
if [ "${HIPSTACK_FRESH_BUSY_CORE:-0}" = 1 ]; then
  sh -c 'while :; do :; done' &
  busy=$!
  trap 'kill "$busy" 2>/dev/null; _fresh_clone_cleanup' EXIT
  echo "# one core kept busy beside the commands (pid $busy)"
fi

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
# test.sh's own closing table: each step's wall time and the tests closest to their timeout.
sed -n '/^== step times and test margins/,$p' "$work/test.log"
if [ $rc = 0 ] && grep -q '^== all tests passed' "$work/test.log"; then
  pass "scripts/test.sh passes on a fresh Debian 12"
else
  tail -60 "$work/test.log"
  fail "scripts/test.sh on a fresh Debian 12 (exit $rc)"
fi
[ "$failures" = 0 ]
