# shellcheck shell=bash disable=SC2154  # prog is set by the script that sources this file
# signing.sh: key selection and signing shared by make-apt-repo.sh and make-dnf-repo.sh (sourced).
#
# The caller sets sign_key (a key id or fingerprint, may be empty) and sign_keyring (a GNUPGHOME,
# or a KEYDIR made by make-signing-key.sh, may be empty), then calls sign_resolve; after that
# GNUPGHOME and sign_fpr name the key, and the functions below sign with it.

sign_key=""
sign_keyring=""
sign_fpr=""

# Sets GNUPGHOME and sign_fpr, or exits 1 with the reason.
sign_resolve() {
    command -v gpg >/dev/null || { echo "$prog: gpg not found (apt-get install gnupg)" >&2; exit 1; }
    if [ -n "$sign_keyring" ]; then
        # A KEYDIR from make-signing-key.sh holds its GNUPGHOME in gnupg/.
        if [ -d "$sign_keyring/gnupg" ]; then sign_keyring=$sign_keyring/gnupg; fi
        [ -d "$sign_keyring" ] || { echo "$prog: --keyring '$sign_keyring' is not a directory" >&2; exit 2; }
        GNUPGHOME=$(cd "$sign_keyring" && pwd)
        export GNUPGHOME
    fi
    # gpg exits 2 for a --key it does not know: that is "no such key", reported below (under
    # pipefail, 'gpg | awk' would end the script with no message).
    local listing="" fprs
    listing=$(gpg --batch --with-colons --list-secret-keys ${sign_key:+"$sign_key"} 2>/dev/null) || true
    fprs=$(printf '%s\n' "$listing" | awk -F: '/^sec:/ {want=1; next} want && /^fpr:/ {print $10; want=0}')
    local count
    count=$(printf '%s' "$fprs" | grep -c . || true)
    if [ "$count" -eq 0 ] && [ -n "$sign_key" ]; then
        echo "$prog: no secret key $sign_key in ${GNUPGHOME:-~/.gnupg} (check --key and --keyring;" \
             "gpg --list-secret-keys lists the keys there)" >&2
        exit 1
    fi
    if [ "$count" -eq 0 ]; then
        echo "$prog: no secret key in ${GNUPGHOME:-~/.gnupg}" \
             "(make one with installer/make-signing-key.sh KEYDIR, then pass --keyring KEYDIR)" >&2
        exit 1
    fi
    if [ "$count" -gt 1 ]; then
        echo "$prog: ${GNUPGHOME:-~/.gnupg} holds $count secret keys; name one with --key:" >&2
        printf '  %s\n' $fprs >&2
        exit 2
    fi
    sign_fpr=$fprs
}

# sign_clear IN OUT / sign_detached IN OUT: OpenPGP signatures (SHA-512, armored).
sign_clear() {
    gpg --batch --yes --quiet --local-user "$sign_fpr" --digest-algo SHA512 --clearsign -o "$2" "$1"
}
sign_detached() {
    gpg --batch --yes --quiet --local-user "$sign_fpr" --digest-algo SHA512 --armor --detach-sign -o "$2" "$1"
}

# sign_export DIR: the public key as DIR/hipstack.gpg (binary) and DIR/hipstack.asc (armored).
sign_export() {
    gpg --batch --yes --export "$sign_fpr" > "$1/hipstack.gpg"
    gpg --batch --yes --armor --export "$sign_fpr" > "$1/hipstack.asc"
}
