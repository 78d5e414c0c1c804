#!/usr/bin/env bash
# package_binary.py builds packages side by side (HIPSTACK_PACKAGE_JOBS): the bytes of every .deb and
# .rpm must not depend on how many run at once (reproducible releases, docs/superbuild.md). A small
# stage of two binary components and a metapackage is packaged with 1 and with 4 jobs, and the outputs
# compared file by file; a bad HIPSTACK_PACKAGE_JOBS and a file missing from the stage are refused
# with a message naming them.
#   test_package_jobs.sh SOURCE_ROOT WORK_DIR
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: test_package_jobs.sh SOURCE_ROOT WORK_DIR" >&2; exit 2; }
root=$(realpath "$1") work=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
for tool in dpkg-deb rpmbuild python3; do command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }; done
rm -rf "$work"; mkdir -p "$work"; work=$(realpath "$work")
version=$(sed -n 's/^set(HIPSTACK_RELEASE_VERSION \([0-9.]*\))$/\1/p' "$root/CMakeLists.txt")
prefix=opt/hipstack-$version
stage=$work/stage
mkdir -p "$stage/$prefix/lib" "$stage/$prefix/bin"
for deb in liba libb; do
  mkdir -p "$stage/$prefix/share/doc/$deb"
  printf 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\nFiles: *\nCopyright: 2026 test\nLicense: MIT\n' \
    > "$stage/$prefix/share/doc/$deb/copyright"
done
# Content that takes xz some work, so that several jobs really overlap.
head -c 8000000 /dev/urandom > "$stage/$prefix/lib/liba.so.1"
seq 1 400000 > "$stage/$prefix/lib/libb.so.1"
printf '#!/bin/sh\necho b\n' > "$stage/$prefix/bin/b"; chmod 755 "$stage/$prefix/bin/b"
python3 - "$stage/manifest.json" "$version" "/$prefix" <<'PY'
import json, sys
path, version, prefix = sys.argv[1:]
p = prefix.lstrip("/")
def component(deb, files, package, depends):
    return {"kind": "binary", "depends": depends,
            "origin": {"debs": [{"package": deb, "version": "1.0-1", "arch": "amd64", "sha256": "0" * 64}]},
            "packages": [{"package": package, "files": files}]}
m = {"version": version, "release": version, "prefix": prefix, "track": "debian12",
     "components": {
         "sys": {"kind": "system", "depends": [], "system": {"deb": ["libc6"], "rpm": ["glibc"]}, "packages": []},
         "a": component("liba", [f"{p}/lib/liba.so.1", f"{p}/share/doc/liba/copyright"], f"hipstack-amd-runtime{version}", ["sys"]),
         "b": component("libb", [f"{p}/lib/libb.so.1", f"{p}/bin/b", f"{p}/share/doc/libb/copyright"], f"hipstack-amd-libs{version}", ["a"])},
     "metapackages": {"hipstack-amd": {"summary": "both", "depends": [f"hipstack-amd-runtime{version}", f"hipstack-amd-libs{version}"]}}}
json.dump(m, open(path, "w"), indent=1)
PY
printf 'hipstack (%s-1) unstable; urgency=medium\n\n  * Test release.\n\n -- Test <test@example.org>  Mon, 30 Nov 2026 00:00:00 +0000\n' \
  "$version" > "$work/changelog"
printf '* Mon Nov 30 2026 Test <test@example.org> - %s-1\n- Test release.\n' "$version" > "$work/rpm-changelog"
package() {  # package JOBS OUT
  SOURCE_DATE_EPOCH=1790000000 HIPSTACK_PACKAGE_JOBS=$1 python3 "$root/superbuild/scripts/package_binary.py" \
    "$stage" "$2" "$work/changelog" "$work/rpm-changelog"
}
package 1 "$work/one" > "$work/one.log" 2>&1 || { cat "$work/one.log"; fail "package_binary.py with 1 job"; }
package 4 "$work/four" > "$work/four.log" 2>&1 || { cat "$work/four.log"; fail "package_binary.py with 4 jobs"; }
n=$(find "$work/one" -type f | wc -l)
[ "$n" = 6 ] || fail "1 job made $n files, not 3 .deb and 3 .rpm: $(ls "$work/one")"
diff <(cd "$work/one" && ls) <(cd "$work/four" && ls) > /dev/null || fail "1 and 4 jobs made different files"
for f in "$work/one"/*; do
  cmp -s "$f" "$work/four/$(basename "$f")" || fail "$(basename "$f") differs between 1 and 4 jobs"
done
echo "ok   - 3 .deb and 3 .rpm, byte for byte the same with 1 and with 4 jobs"
if package 0 "$work/zero" > "$work/zero.log" 2>&1; then fail "HIPSTACK_PACKAGE_JOBS=0 was taken"; fi
grep -q "HIPSTACK_PACKAGE_JOBS must be a positive number, not '0'" "$work/zero.log" || fail "HIPSTACK_PACKAGE_JOBS=0: $(cat "$work/zero.log")"
rm "$stage/$prefix/bin/b"
if package 2 "$work/missing" > "$work/missing.log" 2>&1; then fail "a file missing from the stage was not noticed"; fi
grep -q "hipstack-amd-libs$version: 1 file(s) of the manifest are not in the stage, e.g. $prefix/bin/b" "$work/missing.log" ||
  fail "missing file: $(cat "$work/missing.log")"
echo "ok   - a bad HIPSTACK_PACKAGE_JOBS and a file missing from the stage are refused, naming them"
echo PASS
