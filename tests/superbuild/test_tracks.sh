#!/usr/bin/env bash
# Release tracks of the component manifest (docs/superbuild.md): a manifest with two tracks stages each
# track's components only, into that track's prefix (/opt/hipstack-X.Y.Z and /opt/hipstack-X.Y.Z-SUFFIX),
# with versioned package names carrying the suffix and values that differ by track resolved; broken
# track definitions are refused naming what is wrong; the real manifest's tracks list, and
# scripts/deps.sh's system packages follow the track; one OUTDIR holds one track.
#   test_tracks.sh SOURCE_ROOT WORK_DIR
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: test_tracks.sh SOURCE_ROOT WORK_DIR" >&2; exit 2; }
root=$(realpath "$1") work=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work"; work=$(realpath "$work")
version=$(sed -n 's/^set(HIPSTACK_RELEASE_VERSION \([0-9.]*\))$/\1/p' "$root/CMakeLists.txt")

# The real manifest: both tracks listed, the default first, with their prefixes.
list=$("$root/superbuild/build.sh" --list-tracks)
[ "$(sed -n 1p <<<"$list")" = "debian12 (default): debian bookworm, ROCm 5.2.3, /opt/hipstack-$version" ] || fail "--list-tracks: $list"
grep -qx "current: debian sid, ROCm 7.2.4, /opt/hipstack-$version-rocm7.2" <<<"$list" || fail "--list-tracks: $list"
packages() { cmake -DMANIFEST="$root/superbuild/components.json" -DTRACK="$1" -P "$root/superbuild/cmake/system_packages.cmake"; }
sys_default=$(packages "") sys_current=$(packages current)
grep -qx clang-15 <<<"$sys_default" && ! grep -qx clang-22 <<<"$sys_default" || fail "default track's system packages: $sys_default"
grep -qx clang-22 <<<"$sys_current" && ! grep -qx clang-15 <<<"$sys_current" || fail "current track's system packages: $sys_current"
echo "ok   - --list-tracks lists debian12 (default) and current; the system packages follow the track"
# On a machine of another distribution than the track's, deps.sh installs only what makes the track's
# build root (sid's clang 22 cannot install on Debian 12: the first fresh-machine run of the README's
# commands for the current track stopped there). The superbuild's own packages are installed already
# here (scripts/deps.sh test), so this installs nothing.
host=$( . /etc/os-release && echo "${VERSION_CODENAME:-}" )
if [ "$host" != sid ] && [ "$(id -u)" = 0 ]; then
  got=$("$root/scripts/deps.sh" superbuild current 2>&1) || fail "deps.sh superbuild current on $host: $got"
  grep -q "track 'current' builds in its own Debian sid root" <<<"$got" || fail "deps.sh superbuild current on $host said: $got"
  echo "ok   - deps.sh superbuild current on $host leaves the track's system packages to its sid root"
fi

# A manifest of two tracks: 'one' in both, 'a-only' in track a, 'b-only' in track b (with a suffix).
cp -r "$root/tests/superbuild/tiny" "$work/tiny"
tiny_dir=$(realpath --relative-to="$root" "$work/tiny")  # in-tree folders are relative to the repository
manifest() {  # manifest FILE EXTRA_COMPONENT_JSON
  cat > "$1" <<EOF
{ "format": 1,
  "tracks": { "a": { "default": true, "release_suffix": "" },
              "b": { "release_suffix": "-b7.1", "amdgpu_targets": ["gfx942", "gfx950"] } },
  "metapackages": { "meta": { "summary": "s", "depends": { "a": ["one@RELEASE@"], "b": ["one@RELEASE@", "bee@RELEASE@"] } } },
  "components": {
    "one": { "description": "in every track", "origin": { "kind": "source", "dir": "$tiny_dir" },
             "build": { "system": "cmake", "args": ["-DCMAKE_BUILD_TYPE=Release", "-DTINY_NOTE=@TRACK@:@AMDGPU_TARGETS@"] },
             "packages": [ { "package": "one@RELEASE@", "files": ["**"] } ] },
    "a-only": { "tracks": ["a"], "description": "a", "origin": { "kind": "system", "build": false, "deb": ["a-pkg"], "rpm": [] } },
    "b-only": { "tracks": ["b"], "description": "b", "origin": { "kind": "system", "build": false, "deb": ["b-pkg"], "rpm": [] },
                "depends": { "a": [], "b": [] } } $2 } }
EOF
}
manifest "$work/two.json" ""
for t in a b; do
  cmake -S "$root/superbuild" -B "$work/$t/build" -G Ninja -DHIPSTACK_SUPERBUILD_MANIFEST="$work/two.json" \
        -DHIPSTACK_SUPERBUILD_TRACK=$t > "$work/$t-configure.log" 2>&1 || { cat "$work/$t-configure.log"; fail "configure track $t"; }
  cmake --build "$work/$t/build" > "$work/$t-build.log" 2>&1 || { cat "$work/$t-build.log"; fail "build track $t"; }
done
grep -q "components, in build order: a-only;one" "$work/a-configure.log" || fail "track a's components: $(grep 'build order' "$work/a-configure.log")"
grep -q "components, in build order: b-only;one" "$work/b-configure.log" || fail "track b's components: $(grep 'build order' "$work/b-configure.log")"
[ -x "$work/a/stage/opt/hipstack-$version/bin/tiny-hello" ] || fail "track a did not stage into /opt/hipstack-$version"
[ -x "$work/b/stage/opt/hipstack-$version-b7.1/bin/tiny-hello" ] || fail "track b did not stage into /opt/hipstack-$version-b7.1"
# A list placeholder reaches the component whole (its items separated by ; again).
grep -q 'TINY_NOTE:UNINITIALIZED=b:gfx942;gfx950\|TINY_NOTE:STRING=b:gfx942;gfx950' "$work/b/build/ep/one/build/CMakeCache.txt" ||
  fail "@TRACK@:@AMDGPU_TARGETS@ in track b: $(grep TINY_NOTE "$work/b/build/ep/one/build/CMakeCache.txt")"
python3 - "$work/a/stage/manifest.json" "$work/b/stage/manifest.json" "$version" <<'EOF' || fail "stage/manifest.json of the tracks"
import json, sys
a, b, v = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
assert (a["track"], a["release"], a["prefix"]) == ("a", v, f"/opt/hipstack-{v}"), a
assert (b["track"], b["release"], b["prefix"]) == ("b", v + "-b7.1", f"/opt/hipstack-{v}-b7.1"), b
assert a["version"] == b["version"] == v
assert [p["package"] for p in b["components"]["one"]["packages"]] == [f"one{v}-b7.1"], b["components"]["one"]
assert a["metapackages"]["meta"]["depends"] == [f"one{v}"], a["metapackages"]
assert b["metapackages"]["meta"]["depends"] == [f"one{v}-b7.1", f"bee{v}-b7.1"], b["metapackages"]
assert set(a["components"]) == {"one", "a-only"} and set(b["components"]) == {"one", "b-only"}
EOF
echo "ok   - two tracks of one manifest: each its components, prefix, package names and metapackage depends"

# Refusals, each naming what is wrong.
refused() {  # refused NAME EXPECTED_TEXT [cmake -D options...]
  local name=$1 expected=$2; shift 2
  if cmake -S "$root/superbuild" -B "$work/$name/build" -G Ninja -DHIPSTACK_SUPERBUILD_MANIFEST="$work/$name.json" "$@" \
       > "$work/$name.log" 2>&1; then
    fail "$name: accepted"
  fi
  tr -s ' \n' '  ' < "$work/$name.log" | grep -qF "$expected" || { cat "$work/$name.log"; fail "$name: no '$expected'"; }
  echo "ok   - refused: $expected"
}
cp "$work/two.json" "$work/unknown.json"
refused unknown "has no release track 'c' (it has: a, b)" -DHIPSTACK_SUPERBUILD_TRACK=c
manifest "$work/cross.json" ', "x": { "tracks": ["b"], "description": "x", "origin": { "kind": "system", "build": false, "deb": ["x"], "rpm": [] }, "depends": ["a-only"] }'
refused cross "component 'x' of track 'b' depends on 'a-only', which is not in that track" -DHIPSTACK_SUPERBUILD_TRACK=b
manifest "$work/pertrack.json" ', "y": { "description": "y", "origin": { "kind": "system", "build": false, "deb": ["y"], "rpm": [] }, "depends": { "a": [] } }'
refused pertrack "component 'y': depends has a value per track, but none for 'b'" -DHIPSTACK_SUPERBUILD_TRACK=b
manifest "$work/badtrack.json" ', "z": { "tracks": ["c"], "description": "z", "origin": { "kind": "system", "build": false, "deb": ["z"], "rpm": [] } }'
refused badtrack "component 'z' names track 'c', which the manifest does not"
sed 's/"release_suffix": "-b7.1"/"release_suffix": "B 7"/' "$work/two.json" > "$work/badsuffix.json"
refused badsuffix "track 'b': release_suffix 'B 7' is not empty or '-' and lower case letters" -DHIPSTACK_SUPERBUILD_TRACK=b
sed 's/"b": { "release_suffix"/"b": { "default": true, "release_suffix"/' "$work/two.json" > "$work/twodefaults.json"
refused twodefaults 'exactly one track has "default": true (found: a;b)'

# One OUTDIR, one track: build.sh refuses to turn an OUTDIR of one track into another's.
mkdir -p "$work/outdir" && echo debian12 > "$work/outdir/track"
if "$root/superbuild/build.sh" --track current "$work/outdir" > "$work/outdir.log" 2>&1; then fail "build.sh took an OUTDIR of another track"; fi
grep -qF "holds track 'debian12', not 'current': use another OUTDIR" "$work/outdir.log" || { cat "$work/outdir.log"; fail "outdir refusal"; }
if "$root/superbuild/build.sh" --track nope "$work/outdir2" > "$work/nope.log" 2>&1; then fail "build.sh took an unknown track"; fi
grep -qF "has no release track 'nope' (it has: debian12, current)" "$work/nope.log" || { cat "$work/nope.log"; fail "unknown track refusal"; }
echo "ok   - build.sh: one OUTDIR holds one track; an unknown track is refused"
echo "PASS"
