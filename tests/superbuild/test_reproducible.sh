#!/usr/bin/env bash
# A whole release is reproducible: `superbuild/build.sh` again, from scratch into SECOND_OUT (with the
# same download cache), makes the same set of packages as FIRST_OUT, each byte-identical: the in-tree
# ones (CPack), their debug packages and the relocated AMD ones. SOURCE_DATE_EPOCH is the last
# commit's, so both builds must be of the same commit. (The repositories' signatures carry their
# signing time and are not compared; their package files are the ones compared here.)
#   test_reproducible.sh SOURCE_ROOT FIRST_OUT SECOND_OUT [-DVAR=VALUE ...]
# Exit 0 pass, 1 fail, 77 skip (FIRST_OUT holds no finished superbuild).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: test_reproducible.sh SOURCE_ROOT FIRST_OUT SECOND_OUT [-DVAR=VALUE ...]" >&2; exit 2; }
src=$(realpath "$1") first=$(realpath -m "$2") second=$(realpath -m "$3")
shift 3
[ -f "$first/packages/.done" ] || { echo "SKIP: $first holds no finished superbuild"; exit 77; }
rm -rf "$second"
start=$(date +%s)
"$src/superbuild/build.sh" "$second" "$@" > "$second.log" 2>&1 || { tail -30 "$second.log"; echo "FAIL: the second superbuild"; exit 1; }
echo "second superbuild: $(( $(date +%s) - start )) s"
a=$(cd "$first/packages" && ls) b=$(cd "$second/packages" && ls)
[ "$a" = "$b" ] || { echo "FAIL: the two builds made different sets of packages"; diff <(echo "$a") <(echo "$b") || true; exit 1; }
status=0
for f in $a; do
  cmp -s "$first/packages/$f" "$second/packages/$f" || { echo "FAIL: $f differs between the two builds"; status=1; }
done
[ $status -eq 0 ] && echo "reproducible: $(wc -w <<<"$a") packages byte-identical"
exit $status
