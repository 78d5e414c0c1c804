#!/usr/bin/env bash
# The superbuild's binary origin refuses a .deb whose SHA-256 is not the manifest's: apt downloads it
# (and checks it against Debian's signed index), then the superbuild compares it with the manifest.
#   test_deb_checksum.sh SOURCE_ROOT WORK_DIR
# Exit 77 (skip) when Debian's archive is unreachable.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: test_deb_checksum.sh SOURCE_ROOT WORK_DIR" >&2; exit 2; }
root=$(realpath "$1") work=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work"; work=$(realpath "$work")

# libhiprtc-builtins5 (35 kB, no dependencies), pinned with the checksum of another file.
bad=$(echo "not the package" | sha256sum | cut -d' ' -f1)
cat > "$work/manifest.json" <<EOF
{ "format": 1,
  "components": {
    "hiprtc-builtins": { "origin": { "kind": "binary", "debs": [
      { "package": "libhiprtc-builtins5", "version": "5.2.3-8", "arch": "amd64", "sha256": "$bad" } ] },
      "packages": [ { "package": "hiprtc-builtins", "files": ["**"] } ] } } }
EOF
cmake -S "$root/superbuild" -B "$work/build" -G Ninja -DHIPSTACK_SUPERBUILD_MANIFEST="$work/manifest.json" \
      > "$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure"; }
if cmake --build "$work/build" > "$work/build.log" 2>&1; then
  fail "a .deb whose SHA-256 is not the manifest's was accepted"
fi
if grep -q "apt-get download .* failed" "$work/build.log"; then
  echo "SKIP: Debian's archive is unreachable"
  exit 77
fi
good=$(apt-cache show --no-all-versions libhiprtc-builtins5=5.2.3-8 | sed -n 's/^SHA256: //p')
[ ${#good} = 64 ] || fail "apt-cache show gave no SHA256 for libhiprtc-builtins5 5.2.3-8"
grep -qF "component 'hiprtc-builtins': package libhiprtc-builtins5 5.2.3-8: SHA-256 mismatch: the manifest says $bad, the downloaded .deb has $good" \
     "$work/build.log" || { cat "$work/build.log"; fail "the refusal does not name the component, the package and both checksums"; }
[ ! -e "$work/stage" ] || fail "something was staged despite the mismatch"
[ -z "$(find "$work/downloads" -name '*.deb')" ] || fail "the refused .deb was cached"
echo "PASS: a .deb not matching the manifest's SHA-256 is refused"
