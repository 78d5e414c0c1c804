#!/bin/bash
# The superbuild's two documented commands on a fresh Debian 12 machine (docs/superbuild.md): a clean
# clone in a clean debootstrap chroot, `scripts/deps.sh superbuild [TRACK]`, then
# `superbuild/build.sh [--track TRACK] OUT`; nothing else installed, so the build cannot lean on what
# the test dependencies happen to bring (Debian's own hipcc and HIP runtime among them). Then the
# track's release check on what they made: test_release.sh (debian12) or test_track_release.sh
# (current: that build runs in its own sid root, made by build.sh inside the Debian 12 chroot).
#   test_fresh_debian12.sh [--track TRACK] SOURCE_DIR CAPTURE_SYS_DIR [CACHE_DIR]
# Needs root, deb.debian.org and about 25 minutes of two cores (debian12; current: about 35): label
# `long`, run by hand before a submission that changes the superbuild or deps.sh, reported in the
# session note (docs/testing.md).
# HIPSTACK_FRESH_KEEP=1 keeps the chroot (its path is printed) for a look after a failure, or to test
# more of the release it made (the OUT folder is /var/tmp/superbuild in it).
set -u
track=""
if [ "${1:-}" = --track ]; then track=${2:?--track needs a name}; shift 2; fi
src=$(cd "$1" && pwd)
capture=$(realpath "$2")
cache=${3:-$src/build/cache}
# shellcheck source=../lib/checks.sh
source "$src/tests/lib/checks.sh"
# shellcheck source=../../scripts/lib/debian_chroot.sh
source "$src/scripts/lib/debian_chroot.sh"
# shellcheck source=../lib/fresh_clone_chroot.sh
source "$src/tests/lib/fresh_clone_chroot.sh"
fresh_clone_chroot "$src" "$cache" "hipstack-superbuild-debian12${track:+-$track}"

timed() {  # timed WHAT LOG COMMAND: runs COMMAND in the chroot, prints its exit status and time
  local what=$1 log=$2 start rc=0
  start=$(date +%s)
  in_chroot "$3" > "$work/$log" 2>&1 || rc=$?
  echo "# $what: exit $rc after $(($(date +%s) - start)) s"
  if [ $rc = 0 ]; then pass "$what"; else tail -40 "$work/$log"; fail "$what (exit $rc, $work/$log)"; fi
  return $rc
}
timed "scripts/deps.sh superbuild${track:+ $track}" deps.log "scripts/deps.sh superbuild $track" || exit 1
# What the build may not use: Debian's HIP (the test dependencies install it, the superbuild must not).
for p in hipcc libamdhip64-5 libamdhip64-dev; do
  if in_chroot "dpkg-query -W -f='\${Status}' $p 2>/dev/null | grep -q 'install ok installed'"; then
    fail "scripts/deps.sh superbuild installed Debian's $p: the test would not show the superbuild does without it"
  fi
done
timed "superbuild/build.sh ${track:+--track $track }OUT" build.log \
  "superbuild/build.sh ${track:+--track $track} /var/tmp/superbuild" || exit 1
grep -E '^superbuild(/package.sh)?: ' "$work/build.log" | tail -3

# The release it made, as users meet it (its own chroot, from the host's tools).
case ${track:-debian12} in
  debian12) "$src/tests/superbuild/test_release.sh" "$root/var/tmp/superbuild" "$capture" "$cache" ||
              fail "test_release.sh on the fresh build" ;;
  current) "$src/tests/superbuild/test_track_release.sh" "$root/var/tmp/superbuild" "$capture" "$cache" ||
             fail "test_track_release.sh on the fresh build" ;;
  *) fail "no release check for track '$track'" ;;
esac
[ "$failures" = 0 ]
