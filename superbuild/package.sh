#!/usr/bin/env bash
# superbuild/package.sh OUTDIR: the last step of superbuild/build.sh. From what the superbuild staged:
#   OUTDIR/packages/   the .deb and .rpm files: the in-tree components' (CPack, in the `hipstack`
#                      component's packaging-mode build) and the binary components' (package_binary.py,
#                      from stage/manifest.json's package rules)
#   OUTDIR/repo/apt/, OUTDIR/repo/dnf/   signed repositories of them (installer/make-*-repo.sh)
# The signing key: $HIPSTACK_SIGNING_KEYRING (a folder made by installer/make-signing-key.sh), else a
# key made once in OUTDIR/key (fine for tests; docs/install-repos.md says how releases are signed).
# Skips everything when nothing was staged since its last run.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: superbuild/package.sh OUTDIR" >&2; exit 2; }
out=$(realpath -m "$1")
here=$(dirname "$(realpath "$0")")
top=$(dirname "$here")
stage=$out/stage
packages=$out/packages
stamp=$packages/.done
[ -f "$stage/manifest.json" ] || { echo "superbuild/package.sh: no $stage/manifest.json: run superbuild/build.sh first" >&2; exit 1; }
: "${SOURCE_DATE_EPOCH:=$(git -C "$top" log -1 --format=%ct)}"
export SOURCE_DATE_EPOCH
keyring=${HIPSTACK_SIGNING_KEYRING:-$out/key}

# Up to date: the stamp exists and no staged file (cmake --install leaves unchanged files alone) nor
# the manifest is newer than it.
if [ -f "$stamp" ] && [ -d "$out/repo/apt/dists" ] && [ -d "$out/repo/dnf/repodata" ] &&
   [ -z "$(find "$stage" -newer "$stamp" \( -type f -o -type l \) -print -quit)" ]; then
  echo "superbuild/package.sh: packages and repositories are up to date"
  exit 0
fi
rm -rf "$packages" "$out/repo"
mkdir -p "$packages"

# The in-tree components: CPack in the `hipstack` component's build (configured with HIPSTACK_PACKAGING).
intree=$out/build/ep/hipstack/build
[ -f "$intree/CPackConfig.cmake" ] || { echo "superbuild/package.sh: $intree has no CPack configuration" >&2; exit 1; }
(cd "$intree" && rm -rf packages && cpack -G "DEB;RPM" > "$out/cpack.log" 2>&1) ||
  { echo "superbuild/package.sh: cpack failed; see $out/cpack.log" >&2; exit 1; }
cp "$intree"/packages/*.deb "$intree"/packages/*.ddeb "$intree"/packages/*.rpm "$packages"/ 2>/dev/null || true
ls "$packages"/*.deb >/dev/null 2>&1 || { echo "superbuild/package.sh: cpack made no .deb (see $out/cpack.log)" >&2; exit 1; }

# The binary components (Debian's ROCm, relocated).
python3 "$here/scripts/package_binary.py" "$stage" "$packages"

# The repositories.
[ -f "$keyring/fingerprint" ] || "$top/installer/make-signing-key.sh" "$keyring" > /dev/null
"$top/installer/make-apt-repo.sh" "$packages" "$out/repo/apt" --keyring "$keyring" > /dev/null
"$top/installer/make-dnf-repo.sh" "$packages" "$out/repo/dnf" --keyring "$keyring" > /dev/null
touch "$stamp"
echo "superbuild/package.sh: $(ls "$packages"/*.deb | wc -l) .deb and $(ls "$packages"/*.rpm | wc -l) .rpm in $packages;" \
     "repositories in $out/repo/apt and $out/repo/dnf (key $keyring)"
