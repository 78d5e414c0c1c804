#!/bin/bash
# make-apt-repo.sh PACKAGES_DIR REPO_DIR: a signed apt repository from a folder of .deb files.
#
# REPO_DIR/pool/<component>/<p>/<package>/<package>_<version>_<arch>.deb
# REPO_DIR/dists/<suite>/<component>/binary-<arch>/{Packages,Packages.gz,Packages.xz,Release}
# REPO_DIR/dists/<suite>/{Release,InRelease,Release.gpg}
# REPO_DIR/hipstack.gpg, REPO_DIR/hipstack.asc   the public key (binary and armored)
#
# The index of <suite>/<component> lists exactly the packages of PACKAGES_DIR; the pool is shared,
# so several suites (e.g. stable and testing) can be built into one REPO_DIR, one run each.
# Output is byte-for-byte reproducible except the signatures (they carry their signing time);
# the Release Date comes from SOURCE_DATE_EPOCH when it is set. dists/<suite> and the keys are
# built in a temporary folder in REPO_DIR and swapped in at the end: a failure changes nothing.
set -euo pipefail
prog=make-apt-repo.sh
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=installer/signing.sh
. "$here/signing.sh"

usage() {
    cat <<'EOF'
usage: make-apt-repo.sh PACKAGES_DIR REPO_DIR [--suite S] [--component C] [--codename N]
                        [--origin O] [--label L] [--key KEYID] [--keyring DIR] [--no-sign]
  PACKAGES_DIR  folder with the .deb files (not searched recursively)
  REPO_DIR      the repository (created; other suites and components in it are kept)
  --suite       suite name (default stable)
  --component   component name (default main)
  --codename    Codename field (default: the suite)
  --origin, --label   Release fields (default hipstack)
  --key         the signing key's id or fingerprint (default: the only secret key)
  --keyring     a GNUPGHOME, or a KEYDIR made by make-signing-key.sh
  --no-sign     write no InRelease/Release.gpg (apt refuses such a repository unless trusted=yes)
EOF
}
die_usage() { echo "$prog: $1" >&2; usage >&2; exit 2; }
die() { echo "$prog: $1" >&2; exit 1; }

pkgdir="" repo="" suite=stable component=main codename="" origin=hipstack label=hipstack sign=1
while [ $# -gt 0 ]; do
    case "$1" in
        --suite|--component|--codename|--origin|--label|--key|--keyring)
            [ $# -ge 2 ] || die_usage "$1 needs a value"
            case "$1" in
                --suite) suite=$2 ;; --component) component=$2 ;; --codename) codename=$2 ;;
                --origin) origin=$2 ;; --label) label=$2 ;; --key) sign_key=$2 ;; --keyring) sign_keyring=$2 ;;
            esac
            shift 2 ;;
        --no-sign) sign=0; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) die_usage "unknown option '$1'" ;;
        *) if [ -z "$pkgdir" ]; then pkgdir=$1; elif [ -z "$repo" ]; then repo=$1; else die_usage "unexpected argument '$1'"; fi
           shift ;;
    esac
done
[ -n "$pkgdir" ] && [ -n "$repo" ] || die_usage "PACKAGES_DIR and REPO_DIR are required"
[ -d "$pkgdir" ] || die_usage "PACKAGES_DIR '$pkgdir' is not a directory"
for name in "$suite" "$component"; do
    [[ "$name" =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] || die_usage "'$name' is not a valid suite or component name"
done
codename=${codename:-$suite}
[ "$sign" = 0 ] || sign_resolve

export LC_ALL=C
mapfile -t debs < <(find "$pkgdir" -maxdepth 1 -type f -name '*.deb' | sort)
[ ${#debs[@]} -gt 0 ] || die "no .deb files in $pkgdir"

mkdir -p "$repo"
repo=$(cd "$repo" && pwd)
work=$(mktemp -d)
# dists/<suite> and the public keys are built in a temporary folder in REPO_DIR (a rename away)
# and swapped in at the end: a failure (signing, say) leaves the suite that is there as it was.
stage=$(mktemp -d "$repo/.make-apt-repo.XXXXXX")
trap 'rm -rf "$work" "$stage"' EXIT

# Copy into the pool. A published file never changes: the same name with other content is refused.
: > "$work/records"
for deb in "${debs[@]}"; do
    name=$(dpkg-deb -f "$deb" Package)
    version=$(dpkg-deb -f "$deb" Version)
    arch=$(dpkg-deb -f "$deb" Architecture)
    [ -n "$name" ] && [ -n "$version" ] && [ -n "$arch" ] || die "$deb: no Package/Version/Architecture"
    case "$name" in lib?*) prefix=${name:0:4} ;; *) prefix=${name:0:1} ;; esac
    pool=pool/$component/$prefix/$name/${name}_${version#*:}_$arch.deb
    if [ -e "$repo/$pool" ]; then
        cmp -s "$deb" "$repo/$pool" || die "$repo/$pool exists with other content; a published package never changes: bump its version"
    else
        mkdir -p "$repo/$(dirname "$pool")"
        cp "$deb" "$repo/$pool.tmp" && mv "$repo/$pool.tmp" "$repo/$pool"
    fi
    printf '%s\t%s\t%s\t%s\n' "$name" "$version" "$arch" "$pool" >> "$work/records"
done
sort -t "$(printf '\t')" -k1,1 -k2,2V -k3,3 "$work/records" -o "$work/records"
dups=$(cut -f1-3 "$work/records" | uniq -d)
[ -z "$dups" ] || die "the same package, version and architecture twice in $pkgdir: $dups"

# Architectures: amd64 always, plus any other found; arch "all" packages go in every binary-<arch>
# and also in binary-all (Release says No-Support-for-Architecture-all: Packages, as Debian does).
# (awk, not grep -v: grep exits 1 when it selects nothing, as with only "all" packages.)
archs=$(awk -F'\t' '$3 != "all" {print $3} END {print "amd64"}' "$work/records" | sort -u)

# write_packages ARCH...: the Packages stanzas of the records whose architecture is one of ARCH.
write_packages() {
    local name version arch pool first=1 want
    while IFS=$'\t' read -r name version arch pool; do
        for want in "$@"; do
            [ "$arch" = "$want" ] || continue
            [ $first = 1 ] || echo
            first=0
            # Without blank lines: CPack ends its control file with one, which would split the stanza.
            dpkg-deb -f "$repo/$pool" | sed '/^[[:space:]]*$/d'
            echo "Filename: $pool"
            echo "Size: $(stat -c %s "$repo/$pool")"
            echo "MD5sum: $(md5sum < "$repo/$pool" | cut -d' ' -f1)"
            echo "SHA256: $(sha256sum < "$repo/$pool" | cut -d' ' -f1)"
        done
    done < "$work/records"
}

# The suite as it is (its other components stay), with this component rebuilt.
suite_dir=$stage/suite
if [ -d "$repo/dists/$suite" ]; then cp -a "$repo/dists/$suite" "$suite_dir"; else mkdir -p "$suite_dir"; fi
rm -rf "${suite_dir:?}/$component" "$suite_dir/Release" "$suite_dir/InRelease" "$suite_dir/Release.gpg"
for arch in $archs all; do
    dir=$suite_dir/$component/binary-$arch
    mkdir -p "$dir"
    if [ "$arch" = all ]; then write_packages all > "$dir/Packages"; else write_packages "$arch" all > "$dir/Packages"; fi
    gzip -9 -n -c "$dir/Packages" > "$dir/Packages.gz"
    xz -9 -T1 -c "$dir/Packages" > "$dir/Packages.xz"
    printf 'Archive: %s\nOrigin: %s\nLabel: %s\nComponent: %s\nArchitecture: %s\n' \
        "$suite" "$origin" "$label" "$component" "$arch" > "$dir/Release"
done

# The suite's Release covers every component built into it so far.
components=$(find "$suite_dir" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | tr '\n' ' ')
all_archs=$(find "$suite_dir" -mindepth 2 -maxdepth 2 -type d -name 'binary-*' -printf '%f\n' |
            sed 's/^binary-//' | awk '$0 != "all"' | sort -u | tr '\n' ' ')
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then epoch=$SOURCE_DATE_EPOCH; else epoch=$(date +%s); fi
mapfile -t indexes < <(cd "$suite_dir" && find . -mindepth 2 -type f | sed 's|^\./||' | sort)
checksums() {  # checksums TOOL: " <hash> <size> <path>" for every index file
    local f
    for f in "${indexes[@]}"; do
        printf ' %s %16s %s\n' "$($1 < "$suite_dir/$f" | cut -d' ' -f1)" "$(stat -c %s "$suite_dir/$f")" "$f"
    done
}
{
    echo "Origin: $origin"
    echo "Label: $label"
    echo "Suite: $suite"
    echo "Codename: $codename"
    echo "Date: $(date -u -d "@$epoch" '+%a, %d %b %Y %H:%M:%S UTC')"
    echo "Architectures: ${all_archs}all"
    echo "Components: ${components% }"
    echo "Description: hipstack packages ($suite)"
    echo "No-Support-for-Architecture-all: Packages"
    echo "MD5Sum:"; checksums md5sum
    echo "SHA256:"; checksums sha256sum
    echo "SHA512:"; checksums sha512sum
} > "$suite_dir/Release"

if [ "$sign" = 1 ]; then
    sign_clear "$suite_dir/Release" "$suite_dir/InRelease" || die "could not sign InRelease; $repo was not changed"
    sign_detached "$suite_dir/Release" "$suite_dir/Release.gpg" || die "could not sign Release.gpg; $repo was not changed"
    sign_export "$stage"
    # Check what apt will check: both signatures against the exported keyring.
    gpgv --quiet --keyring "$stage/hipstack.gpg" "$suite_dir/InRelease" 2>/dev/null ||
        die "InRelease does not verify with the exported key; $repo was not changed"
    gpgv --quiet --keyring "$stage/hipstack.gpg" "$suite_dir/Release.gpg" "$suite_dir/Release" 2>/dev/null ||
        die "Release.gpg does not verify with the exported key; $repo was not changed"
fi

# Swap in: the suite (two renames), then the keys that verify it.
mkdir -p "$repo/dists"
[ ! -e "$repo/dists/$suite" ] || mv "$repo/dists/$suite" "$stage/old-suite"
mv "$suite_dir" "$repo/dists/$suite"
if [ "$sign" = 1 ]; then
    mv "$stage/hipstack.gpg" "$stage/hipstack.asc" "$repo/"
    echo "$prog: $repo: $suite/$component, ${#debs[@]} packages, signed by $sign_fpr"
else
    echo "$prog: $repo: $suite/$component, ${#debs[@]} packages, NOT signed"
fi
