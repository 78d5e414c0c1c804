#!/usr/bin/env bash
# The superbuild's source origin (docs/superbuild.md). A pinned tarball this test makes from
# tests/superbuild/tiny, referenced by a file:// URL and its SHA-256, builds and stages; the same
# tarball under a wrong SHA-256 is refused with a message naming the component and both checksums.
# The in-tree kind stages the same folder; two components staging one file are refused.
#   test_tarball.sh SOURCE_ROOT WORK_DIR
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: test_tarball.sh SOURCE_ROOT WORK_DIR" >&2; exit 2; }
root=$(realpath "$1") work=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work"; work=$(realpath "$work")

version=$(sed -n 's/^set(HIPSTACK_RELEASE_VERSION \([0-9.]*\))$/\1/p' "$root/CMakeLists.txt")
[ -n "$version" ] || fail "no project version in $root/CMakeLists.txt"
prefix=/opt/hipstack-$version
prefix_rel=${prefix#/}

tarball=$work/tiny-1.2.3.tar.gz
tar -C "$root/tests/superbuild" --transform 's|^tiny|tiny-1.2.3|' --sort=name --mtime=@0 --owner=0 --group=0 \
    -czf "$tarball" tiny
sha=$(sha256sum < "$tarball" | cut -d' ' -f1)

manifest() {  # manifest FILE SHA256
  cat > "$1" <<EOF
{ "format": 1,
  "components": {
    "tiny": { "description": "a tiny CMake project from a pinned tarball", "version": "1.2.3",
              "origin": { "kind": "source", "url": "file://$tarball", "sha256": "$2" },
              "build": { "system": "cmake", "args": ["-DCMAKE_BUILD_TYPE=Release"] },
              "packages": [ { "package": "tiny-dev", "files": ["lib/libtiny.so"] },
                            { "package": "tiny", "files": ["lib/libtiny.so.*", "bin/*"] } ] } } }
EOF
}

# A good checksum: built, staged, recorded.
manifest "$work/good.json" "$sha"
cmake -S "$root/superbuild" -B "$work/good/build" -G Ninja -DHIPSTACK_SUPERBUILD_MANIFEST="$work/good.json" \
      > "$work/good-configure.log" 2>&1 || { cat "$work/good-configure.log"; fail "configure"; }
cmake --build "$work/good/build" > "$work/good-build.log" 2>&1 || { cat "$work/good-build.log"; fail "build"; }
stage=$work/good/stage
out=$("$stage$prefix/bin/tiny-hello") || fail "the staged tiny-hello did not run"
[ "$out" = "tiny says 42" ] || fail "tiny-hello said '$out'"
[ -f "$work/good/downloads/sha256/$sha/tiny-1.2.3.tar.gz" ] || fail "the tarball is not cached under its SHA-256"
python3 - "$stage/manifest.json" "$sha" "$prefix" <<'EOF' || fail "stage/manifest.json"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["prefix"] == sys.argv[3], m["prefix"]
t = m["components"]["tiny"]
assert t["origin"] == {"url": t["origin"]["url"], "sha256": sys.argv[2]} and t["origin"]["url"].startswith("file://"), t
assert t["version"] == "1.2.3" and t["files_count"] == 4, t
pkgs = {p["package"]: p["files"] for p in t["packages"]}
p = sys.argv[3].lstrip("/")
assert pkgs["tiny-dev"] == [p + "/lib/libtiny.so"], pkgs
assert sorted(pkgs["tiny"]) == [p + "/bin/tiny-hello", p + "/lib/libtiny.so.1", p + "/lib/libtiny.so.1.2.3"], pkgs
EOF
# A rerun with nothing changed does nothing: no download, no configure, no build.
cmake --build "$work/good/build" > "$work/rerun.log" 2>&1 || { cat "$work/rerun.log"; fail "rerun"; }
grep -q "no work to do" "$work/rerun.log" || { cat "$work/rerun.log"; fail "the rerun did work"; }

# A wrong checksum (that of another file): refused before anything is built or staged.
bad=$(echo "not the tarball" | sha256sum | cut -d' ' -f1)
manifest "$work/bad.json" "$bad"
cmake -S "$root/superbuild" -B "$work/bad/build" -G Ninja -DHIPSTACK_SUPERBUILD_MANIFEST="$work/bad.json" \
      > "$work/bad-configure.log" 2>&1 || { cat "$work/bad-configure.log"; fail "configure (bad)"; }
if cmake --build "$work/bad/build" > "$work/bad-build.log" 2>&1; then
  fail "a tarball with the wrong SHA-256 was accepted"
fi
# (CMake wraps the message's lines: compare with the white space squeezed.)
tr -s ' \n' '  ' < "$work/bad-build.log" |
  grep -qF "component 'tiny': SHA-256 mismatch for file://$tarball: the manifest says $bad, the file has $sha" || { cat "$work/bad-build.log"; fail "the refusal does not name the component and both checksums"; }
[ ! -e "$work/bad/stage$prefix" ] || fail "something was staged despite the bad checksum"
[ ! -e "$work/bad/downloads/sha256/$bad" ] && [ ! -e "$work/bad/downloads/sha256/$sha" ] ||
  fail "the refused tarball was cached"
# The in-tree kind (dir), alone, then next to the tarball: the same files from two components.
intree='"tiny-intree": { "origin": { "kind": "source", "dir": "tests/superbuild/tiny" },
                 "build": { "system": "cmake" }, "packages": [ { "package": "tiny", "files": ["**"] } ] }'
echo "{ \"format\": 1, \"components\": { $intree } }" > "$work/intree.json"
cmake -S "$root/superbuild" -B "$work/intree/build" -G Ninja -DHIPSTACK_SUPERBUILD_MANIFEST="$work/intree.json" \
      > "$work/intree.log" 2>&1 && cmake --build "$work/intree/build" >> "$work/intree.log" 2>&1 ||
  { cat "$work/intree.log"; fail "the in-tree component"; }
[ "$("$work/intree/stage$prefix/bin/tiny-hello")" = "tiny says 42" ] || fail "the in-tree tiny-hello"
python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
m["components"].update(json.loads("{" + sys.argv[3] + "}"))
json.dump(m, open(sys.argv[2], "w"))' "$work/good.json" "$work/both.json" "$intree"
cmake -S "$root/superbuild" -B "$work/both/build" -G Ninja -DHIPSTACK_SUPERBUILD_MANIFEST="$work/both.json" \
      > "$work/both.log" 2>&1 || { cat "$work/both.log"; fail "configure (both)"; }
if cmake --build "$work/both/build" >> "$work/both.log" 2>&1; then
  fail "two components staging the same files were accepted"
fi
tr -s ' \n' '  ' < "$work/both.log" |
  grep -qE "superbuild: $prefix_rel/[^ ]+ is staged by two components \(the second: 'tiny(-intree)?'\)" ||
  { cat "$work/both.log"; fail "the refusal of a file staged twice"; }
echo "PASS: source origin (tarball: good checksum staged, wrong checksum refused; in-tree; a file staged twice refused)"
