#!/bin/bash
# make-dnf-repo.sh PACKAGES_DIR REPO_DIR: a signed dnf/zypper (rpm-md) repository from .rpm files.
#
# REPO_DIR/Packages/<p>/<name>-<version>-<release>.<arch>.rpm   copies, each signed (rpmsign --addsign)
# REPO_DIR/repodata/repomd.xml (+ primary, filelists, other)   createrepo_c
# REPO_DIR/repodata/repomd.xml.asc                              detached signature (dnf repo_gpgcheck=1)
# REPO_DIR/repodata/repomd.xml.key                              the public key (where zypper looks)
# REPO_DIR/hipstack.asc, REPO_DIR/hipstack.gpg                  the public key (armored, binary)
#
# The repository lists exactly the packages of PACKAGES_DIR (it is rebuilt, not appended to). It
# is built in a temporary folder in REPO_DIR and swapped in at the end: a failure (signing, say)
# leaves the repository that is there as it was.
# With SOURCE_DATE_EPOCH set, the metadata is reproducible except the signatures (they carry
# their signing time, and a signed rpm carries its signature).
set -euo pipefail
prog=make-dnf-repo.sh
here=$(dirname "$(readlink -f "$0")")
# shellcheck source=installer/signing.sh
. "$here/signing.sh"

usage() {
    cat <<'EOF'
usage: make-dnf-repo.sh PACKAGES_DIR REPO_DIR [--key KEYID] [--keyring DIR] [--no-rpm-sign] [--no-sign]
  PACKAGES_DIR  folder with the .rpm files (not searched recursively; .src.rpm files are skipped)
  REPO_DIR      the repository (its Packages/ and repodata/ are replaced)
  --key         the signing key's id or fingerprint (default: the only secret key)
  --keyring     a GNUPGHOME, or a KEYDIR made by make-signing-key.sh
  --no-rpm-sign keep the packages as they are (sign repomd.xml only)
  --no-sign     sign nothing (dnf then needs gpgcheck=0 repo_gpgcheck=0)
EOF
}
die_usage() { echo "$prog: $1" >&2; usage >&2; exit 2; }
die() { echo "$prog: $1" >&2; exit 1; }

pkgdir="" repo="" sign=1 rpm_sign=1
while [ $# -gt 0 ]; do
    case "$1" in
        --key) [ $# -ge 2 ] || die_usage "--key needs a value"; sign_key=$2; shift 2 ;;
        --keyring) [ $# -ge 2 ] || die_usage "--keyring needs a value"; sign_keyring=$2; shift 2 ;;
        --no-rpm-sign) rpm_sign=0; shift ;;
        --no-sign) sign=0; rpm_sign=0; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) die_usage "unknown option '$1'" ;;
        *) if [ -z "$pkgdir" ]; then pkgdir=$1; elif [ -z "$repo" ]; then repo=$1; else die_usage "unexpected argument '$1'"; fi
           shift ;;
    esac
done
[ -n "$pkgdir" ] && [ -n "$repo" ] || die_usage "PACKAGES_DIR and REPO_DIR are required"
[ -d "$pkgdir" ] || die_usage "PACKAGES_DIR '$pkgdir' is not a directory"
command -v createrepo_c >/dev/null || die "createrepo_c not found (apt-get install createrepo-c)"
if [ "$rpm_sign" = 1 ]; then command -v rpmsign >/dev/null || die "rpmsign not found (apt-get install rpm), or pass --no-rpm-sign"; fi
[ "$sign" = 0 ] || sign_resolve

export LC_ALL=C
mapfile -t rpms < <(find "$pkgdir" -maxdepth 1 -type f -name '*.rpm' ! -name '*.src.rpm' | sort)
[ ${#rpms[@]} -gt 0 ] || die "no .rpm files in $pkgdir"

mkdir -p "$repo"
repo=$(cd "$repo" && pwd)
# In REPO_DIR, so that the swap is a rename on one file system.
stage=$(mktemp -d "$repo/.make-dnf-repo.XXXXXX")
rpmdb=""
trap 'rm -rf "$stage" ${rpmdb:+"$rpmdb"}' EXIT
for rpm in "${rpms[@]}"; do
    file=$(rpm -qp --nosignature --qf '%{NAME}-%{VERSION}-%{RELEASE}.%{ARCH}.rpm' "$rpm")
    dest=Packages/$(printf '%s' "$file" | cut -c1 | tr 'A-Z' 'a-z')/$file
    [ ! -e "$stage/$dest" ] || die "two files in $pkgdir are $file"
    mkdir -p "$(dirname "$stage/$dest")"
    cp "$rpm" "$stage/$dest"
done

if [ "$rpm_sign" = 1 ]; then
    # rpm calls gpg itself; tell it which key and GNUPGHOME (rpm's own default is gpg2, absent on Debian).
    # rpmsign warns when GPG_TTY is unset and stdin is no terminal; gpg needs no terminal here.
    find "$stage/Packages" -name '*.rpm' -print0 | sort -z |
        GPG_TTY=${GPG_TTY:-/dev/null} xargs -0 rpmsign --addsign --define "_gpg_name $sign_fpr" --define "__gpg $(command -v gpg)" \
                         ${GNUPGHOME:+--define "_gpg_path $GNUPGHOME"} > /dev/null ||
        die "rpmsign could not sign the packages (see its message above); $repo was not changed"
fi

# The file time of each package goes into primary.xml: pin it for reproducible metadata.
revision_args=()
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
    find "$stage/Packages" -type f -exec touch -d "@$SOURCE_DATE_EPOCH" {} +
    revision_args=(--revision "$SOURCE_DATE_EPOCH" --set-timestamp-to-revision)
fi
# No sqlite databases: dnf and zypper read the XML, and sqlite files are not reproducible.
createrepo_c --quiet --no-database --workers 1 "${revision_args[@]}" "$stage" >/dev/null

if [ "$sign" = 1 ]; then
    sign_detached "$stage/repodata/repomd.xml" "$stage/repodata/repomd.xml.asc" ||
        die "could not sign repomd.xml; $repo was not changed"
    sign_export "$stage"
    cp "$stage/hipstack.asc" "$stage/repodata/repomd.xml.key"
    gpgv --quiet --keyring "$stage/hipstack.gpg" "$stage/repodata/repomd.xml.asc" "$stage/repodata/repomd.xml" 2>/dev/null ||
        die "repomd.xml.asc does not verify with the exported key; $repo was not changed"
    if [ "$rpm_sign" = 1 ]; then
        # Check the package signatures as rpm will, against a throw-away rpm database. rpmkeys
        # passes an unsigned package ("digests OK"): every line must say "digests signatures OK".
        rpmdb=$(mktemp -d)
        rpmkeys --dbpath "$rpmdb" --import "$stage/hipstack.asc"
        rc=0
        find "$stage/Packages" -name '*.rpm' -print0 | xargs -0 rpmkeys --dbpath "$rpmdb" --checksig > "$rpmdb/out" || rc=$?
        bad=$(grep -v ': digests signatures OK$' "$rpmdb/out" | sed "s|^$stage/||" || true)
        [ $rc -eq 0 ] && [ -z "$bad" ] || die "package signatures do not verify: $(printf '%s\n' "$bad" | head -3); $repo was not changed"
    fi
fi

# Swap in: the packages before the metadata that names them (as a mirror syncs).
for part in Packages repodata; do
    [ ! -e "$repo/$part" ] || mv "$repo/$part" "$stage/old-$part"
    mv "$stage/$part" "$repo/$part"
done
if [ "$sign" = 1 ]; then
    mv "$stage/hipstack.asc" "$stage/hipstack.gpg" "$repo/"
    what="repomd.xml"
    [ "$rpm_sign" = 0 ] || what="repomd.xml and every package"
    echo "$prog: $repo: ${#rpms[@]} packages, $what signed by $sign_fpr"
else
    echo "$prog: $repo: ${#rpms[@]} packages, NOT signed"
fi
