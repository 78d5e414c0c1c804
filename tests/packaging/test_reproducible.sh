#!/usr/bin/env bash
# Two builds from clean build folders give byte-identical packages: builds SOURCE_DIR again, from
# scratch in BUILD_DIR, as VERSION, and compares every .deb, .ddeb and .rpm with those in PACKAGES_DIR
# (made the same way by build_release.sh in another folder, with the same cmake arguments).
# SOURCE_DATE_EPOCH is the last commit's: both builds must be of the same commit.
#   test_reproducible.sh SOURCE_DIR PACKAGES_DIR BUILD_DIR VERSION [cmake arguments...]
# Exit 0 pass, 1 fail, 77 skip (no first build's packages).
set -euo pipefail
src=${1:?usage} first=${2:?usage} build=${3:?usage} version=${4:?usage}
shift 4
here=$(cd "$(dirname "$0")" && pwd)
ls "$first"/*.deb >/dev/null 2>&1 || { echo "SKIP: no packages in $first"; exit 77; }
second=$("$here/build_release.sh" "$src" "$build" "$version" "$@")
status=0
a=$(cd "$first" && ls) b=$(cd "$second" && ls)
[ "$a" = "$b" ] || { echo "FAIL: the two builds made different sets of packages"; diff <(echo "$a") <(echo "$b") || true; exit 1; }
for f in $a; do
  if cmp -s "$first/$f" "$second/$f"; then
    echo "identical: $f"
  else
    echo "FAIL: $f differs between the two builds"; status=1
  fi
done
[ $status -eq 0 ] && echo "reproducible: $(wc -w <<<"$a") packages byte-identical"
exit $status
