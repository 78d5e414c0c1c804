#!/bin/sh
# make-signing-key.sh KEYDIR: create a repository signing key for CI and local builds.
#
# KEYDIR/gnupg/       the GNUPGHOME holding the secret key (no passphrase: CI signs unattended)
# KEYDIR/hipstack.gpg the public key, binary (an apt keyring for Signed-By / signed-by=)
# KEYDIR/hipstack.asc the public key, ASCII-armored (rpm --import, dnf gpgkey=, zypper)
# KEYDIR/fingerprint  the key's fingerprint, one line
#
# The real release key is not made here: see docs/install-repos.md ("The signing key").
# Running it again on the same KEYDIR keeps the existing key and re-exports it.
set -eu

usage() {
    cat <<'EOF'
usage: make-signing-key.sh KEYDIR [--algo rsa4096|ed25519] [--uid "NAME <EMAIL>"] [--expire 2y|0]
  KEYDIR     where the GNUPGHOME (KEYDIR/gnupg) and the exported public keys go
  --algo     key algorithm (default rsa4096: every apt, rpm, dnf and zypper accepts it)
  --uid      user id (default "hipstack CI signing key <ci@hipstack.invalid>")
  --expire   expiry as gpg takes it (default 2y; 0 = never)
EOF
}

die_usage() { echo "make-signing-key.sh: $1" >&2; usage >&2; exit 2; }

keydir=""
algo=rsa4096
uid="hipstack CI signing key <ci@hipstack.invalid>"
expire=2y
while [ $# -gt 0 ]; do
    case "$1" in
        --algo) [ $# -ge 2 ] || die_usage "--algo needs a value"; algo=$2; shift 2 ;;
        --uid) [ $# -ge 2 ] || die_usage "--uid needs a value"; uid=$2; shift 2 ;;
        --expire) [ $# -ge 2 ] || die_usage "--expire needs a value"; expire=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        -*) die_usage "unknown option '$1'" ;;
        *) [ -z "$keydir" ] || die_usage "unexpected argument '$1'"; keydir=$1; shift ;;
    esac
done
[ -n "$keydir" ] || die_usage "KEYDIR is missing"
case "$algo" in
    rsa4096|ed25519) ;;
    *) die_usage "--algo must be rsa4096 or ed25519, not '$algo'" ;;
esac
command -v gpg >/dev/null || { echo "make-signing-key.sh: gpg not found (apt-get install gnupg)" >&2; exit 1; }

mkdir -p "$keydir/gnupg"
chmod 700 "$keydir/gnupg"
GNUPGHOME=$(cd "$keydir/gnupg" && pwd)
export GNUPGHOME
# SHA-512 signatures: apt (and its sqv verifier in newer releases) rejects SHA-1.
cat > "$GNUPGHOME/gpg.conf" <<'EOF'
personal-digest-preferences SHA512 SHA384 SHA256
cert-digest-algo SHA512
default-preference-list SHA512 SHA384 SHA256 AES256 AES192 AES ZLIB ZIP Uncompressed
EOF

die() { echo "make-signing-key.sh: $1" >&2; exit 1; }
# A listing that fails is an error, not "no key yet" (which would make a second key).
listing=$(gpg --batch --with-colons --list-secret-keys 2>&1) || die "gpg cannot list the keys in $GNUPGHOME: $listing"
fpr=$(printf '%s\n' "$listing" | awk -F: '/^fpr:/ {print $10; exit}')
if [ -z "$fpr" ]; then
    # "sign" only: a repository key needs no encryption subkey.
    gpg --batch --quiet --pinentry-mode loopback --passphrase '' \
        --quick-generate-key "$uid" "$algo" sign "$expire"
    fpr=$(gpg --batch --with-colons --list-secret-keys | awk -F: '/^fpr:/ {print $10; exit}')
    echo "make-signing-key.sh: created $algo key $fpr"
else
    echo "make-signing-key.sh: keeping the existing key $fpr"
fi

# Each file is replaced in one rename, and only by a non-empty export: a failing gpg must not
# leave an earlier run's public key truncated.
export_to() {  # export_to FILE GPG-OPTION...
    out=$1; shift
    gpg --batch --yes "$@" --export "$fpr" > "$out.tmp" && [ -s "$out.tmp" ] ||
        { rm -f "$out.tmp"; die "gpg could not export the public key of $fpr to $out"; }
    mv "$out.tmp" "$out"
}
export_to "$keydir/hipstack.gpg"
export_to "$keydir/hipstack.asc" --armor
echo "$fpr" > "$keydir/fingerprint.tmp" && mv "$keydir/fingerprint.tmp" "$keydir/fingerprint"
echo "make-signing-key.sh: GNUPGHOME=$GNUPGHOME"
echo "make-signing-key.sh: public key $keydir/hipstack.gpg (binary), $keydir/hipstack.asc (armored)"
