#!/usr/bin/env bash
# superbuild/package.sh OUTDIR: the last step of superbuild/build.sh. From what the superbuild staged:
#   OUTDIR/packages/   the .deb and .rpm files: the in-tree components' (CPack, in the `hipstack`
#                      component's packaging-mode build) and the binary components' (package_binary.py,
#                      from stage/manifest.json's package rules)
#   OUTDIR/repo/apt/, OUTDIR/repo/dnf/   signed repositories of them (installer/make-*-repo.sh)
#   OUTDIR/repo/python/   the hipstack wheel (built by the in-tree components' build), SHA256SUMS and
#                      its signature SHA256SUMS.asc, and the public key: a folder for pip's --find-links
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
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
  SOURCE_DATE_EPOCH=$(git -C "$top" log -1 --format=%ct 2>/dev/null) ||
    { echo "superbuild/package.sh: set SOURCE_DATE_EPOCH (not a git checkout, so no commit time)" >&2; exit 1; }
fi
[[ $SOURCE_DATE_EPOCH =~ ^[0-9]+$ ]] || { echo "superbuild/package.sh: SOURCE_DATE_EPOCH must be seconds since 1970, not '$SOURCE_DATE_EPOCH'" >&2; exit 1; }
export SOURCE_DATE_EPOCH
# A key the user names is used as it is; only the default one is made here.
if [ -n "${HIPSTACK_SIGNING_KEYRING:-}" ]; then
  keyring=$HIPSTACK_SIGNING_KEYRING
  [ -d "$keyring" ] || { echo "superbuild/package.sh: HIPSTACK_SIGNING_KEYRING '$keyring' is not a directory" >&2; exit 1; }
else
  keyring=$out/key
  # gpg starts a gpg-agent for this GNUPGHOME that outlives us: stop it when we are done, so that no
  # daemon of ours stays behind (one left by a build in a track's root kept answering "no secret key"
  # to the next build there: it saw the root's /out as it was mounted then, empty).
  trap 'gpgconf --homedir "$keyring/gnupg" --kill gpg-agent 2>/dev/null || true' EXIT
  [ -f "$keyring/fingerprint" ] || "$top/installer/make-signing-key.sh" "$keyring" > /dev/null
fi

# Up to date: the stamp exists, records the same inputs (epoch, key, the packaging and repository
# scripts), and no staged file (cmake --install leaves unchanged files alone) nor the manifest is
# newer than it.
inputs=$( { echo "SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH keyring=$(realpath "$keyring")"
            GNUPGHOME=$( [ -d "$keyring/gnupg" ] && echo "$keyring/gnupg" || echo "$keyring") \
              gpg --batch --with-colons --list-secret-keys 2>/dev/null | grep '^fpr:' || true
            find "$here/package.sh" "$here/scripts/package_binary.py" "$top/installer" "$here/packaging" -type f -print0 |
              sort -z | xargs -0 cat | sha256sum; } )
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$inputs" ] && [ -d "$out/repo/apt/dists" ] && [ -d "$out/repo/dnf/repodata" ] && [ -f "$out/repo/python/SHA256SUMS.asc" ] &&
   [ -z "$(find "$stage" -newer "$stamp" \( -type f -o -type l \) -print -quit)" ]; then
  echo "superbuild/package.sh: packages and repositories are up to date"
  exit 0
fi
rm -rf "$out/repo"
intree=$out/build/ep/hipstack/build   # the in-tree components' build: CPack's packages, the wheel
# The packages alone are kept when they are up to date (OUTDIR/packages/.built: same inputs, nothing
# staged since): a failure in the repository steps below does not cost the packaging again (the
# current track's 2.8 GB of libraries take about half an hour to compress on two cores).
built=$packages/.built
if [ -f "$built" ] && [ "$(cat "$built")" = "$inputs" ] &&
   [ -z "$(find "$stage" -newer "$built" \( -type f -o -type l \) -print -quit)" ]; then
  echo "superbuild/package.sh: the packages in $packages are up to date; making the repositories"
else
rm -rf "$packages"
mkdir -p "$packages"

# The in-tree components: CPack in the `hipstack` component's build (configured with HIPSTACK_PACKAGING).
[ -f "$intree/CPackConfig.cmake" ] || { echo "superbuild/package.sh: $intree has no CPack configuration" >&2; exit 1; }
(cd "$intree" && rm -rf packages && cpack -G "DEB;RPM" > "$out/cpack.log" 2>&1) ||
  { echo "superbuild/package.sh: cpack failed; see $out/cpack.log" >&2; exit 1; }
for kind in deb ddeb rpm; do  # ddeb: the debug packages (CPACK_DEBIAN_DEBUGINFO_PACKAGE)
  compgen -G "$intree/packages/*.$kind" >/dev/null || { echo "superbuild/package.sh: cpack made no .$kind (see $out/cpack.log)" >&2; exit 1; }
  cp "$intree"/packages/*."$kind" "$packages"/
done

# The binary components (Debian's ROCm, relocated).
python3 "$here/scripts/package_binary.py" "$stage" "$packages" "$intree/packaging/changelog" "$intree/packaging/rpm-changelog"
echo "$inputs" > "$built"
fi

# The repositories.
"$top/installer/make-apt-repo.sh" "$packages" "$out/repo/apt" --keyring "$keyring" > /dev/null
"$top/installer/make-dnf-repo.sh" "$packages" "$out/repo/dnf" --keyring "$keyring" > /dev/null

# The wheel, for pip users: pip checks no OpenPGP signature, so its SHA-256 is published in a signed
# SHA256SUMS (for `pip install --require-hashes`, or sha256sum -c after gpgv).
mapfile -t wheels < <(compgen -G "$intree/smi-lib/python/wheel/hipstack-*-py3-none-any.whl" || true)
[ ${#wheels[@]} -eq 1 ] || { echo "superbuild/package.sh: expected one wheel in $intree/smi-lib/python/wheel, found ${#wheels[@]}" >&2; exit 1; }
python_repo=$out/repo/python
mkdir -p "$python_repo"
cp "${wheels[0]}" "$python_repo/"
(cd "$python_repo" && sha256sum -- *.whl > SHA256SUMS)
# shellcheck disable=SC2034  # prog and sign_keyring are read by signing.sh
prog=superbuild/package.sh
# shellcheck source=installer/signing.sh
source "$top/installer/signing.sh"
# shellcheck disable=SC2034
sign_keyring=$keyring
sign_resolve
sign_detached "$python_repo/SHA256SUMS" "$python_repo/SHA256SUMS.asc"
sign_export "$python_repo"
echo "$inputs" > "$stamp"
echo "superbuild/package.sh: $(ls "$packages"/*.deb | wc -l) .deb and $(ls "$packages"/*.rpm | wc -l) .rpm in $packages;" \
     "repositories in $out/repo/apt and $out/repo/dnf, the wheel in $python_repo (key $keyring)"
