#!/bin/bash
# test_repos.sh [CACHE_DIR]: the signed apt and dnf repositories and hipstack-install, as users
# meet them. Builds small real packages (named like ours), a signing key, both repositories, then:
#   apt: in a Debian 12 minbase chroot, hipstack-install adds the repository and installs by use
#        case; apt verified the signature; --list; --uninstall leaves nothing of ours; a tampered
#        InRelease and a repository signed with another key are refused with apt's error; the
#        argument and environment errors (not root, unknown use case, unsupported distribution,
#        unreachable repository) are clear.
#   dnf: repomd.xml.asc verifies with gpg, the rpm signature with rpm; rpm --root installs and
#        erases it; dnf --installroot installs it from the repository with gpgcheck and
#        repo_gpgcheck (when dnf is installed), and refuses a repository signed with another key.
# CACHE_DIR (default build/cache) keeps the debootstrap base as a tarball: reruns take seconds.
# Exit 0 pass, 1 fail, 77 skip (not root, or a tool is missing).
set -euo pipefail
start=$(date +%s)
src=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
installer=$src/installer
cache=${1:-$src/build/cache}

skip() { echo "SKIP: $1"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot, mount)"
for tool in debootstrap dpkg-deb gpg gpgv chroot mount xz; do
    command -v "$tool" >/dev/null || skip "$tool is not installed"
done

# shellcheck source=../lib/checks.sh
source "$src/tests/lib/checks.sh"
contains() { grep -q -- "$2" <<< "$1"; }   # contains TEXT REGEX

work=$(mktemp -d /tmp/hipstack-repos-test.XXXXXX)
root=$work/root
mounts=()
cleanup() {
    local m i
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null || true; done
    for m in "$work"/key*/gnupg; do [ ! -d "$m" ] || GNUPGHOME=$m gpgconf --kill gpg-agent 2>/dev/null || true; done
    rm -rf "$work"
    echo "# runtime $(( $(date +%s) - start )) s in all, $failures failure(s)"
}
trap cleanup EXIT

# ------------------------------------------------------------------ packages
export SOURCE_DATE_EPOCH=1700000000
mkdeb() {  # mkdeb NAME ARCH DEPENDS [FILE CONTENT]
    local dir=$work/debsrc/$1
    mkdir -p "$dir/DEBIAN"
    {
        echo "Package: $1"; echo "Version: 9.9.9"; echo "Architecture: $2"
        echo "Maintainer: hipstack test <test@hipstack.invalid>"
        [ -z "$3" ] || echo "Depends: $3"
        echo "Description: hipstack-install test package $1"
        echo  # CPack ends its control files with a blank line: the repository must cope (it once split the stanza)
    } > "$dir/DEBIAN/control"
    if [ $# -ge 5 ]; then
        mkdir -p "$dir/$(dirname "$4")"
        printf '%s\n' "$5" > "$dir/$4"
        chmod 755 "$dir/$4"
    fi
    dpkg-deb --root-owner-group -Zxz --build "$dir" "$work/debs/$1_9.9.9_$2.deb" > /dev/null
}
mkdir -p "$work/debs"
# libhipstack-smi9 and libhipstack-smi-dev sort one way in C and the other in en_US.UTF-8 ('-'
# is ignored there): the record must not depend on the locale hipstack-install runs under.
mkdeb libhipstack-smi9 amd64 ""
mkdeb libhipstack-smi-dev all "libhipstack-smi9 (= 9.9.9)"
mkdeb hipstack-smi-cli9.9.9 amd64 "libhipstack-smi9 (= 9.9.9)" opt/hipstack-9.9.9/bin/hipstack-smi $'#!/bin/sh\necho "hipstack-smi 9.9.9"'
mkdeb hipstack-smi all "hipstack-smi-cli9.9.9 (= 9.9.9)"
mkdeb hipstack-dev all "hipstack-smi-cli9.9.9 (= 9.9.9), libhipstack-smi-dev (= 9.9.9)" opt/hipstack-9.9.9/include/hipstack.h "/* test */"
mkdeb hipstack all "hipstack-smi, hipstack-dev"
# Not in the repository: what something else (unattended-upgrades) installs while hipstack-install runs.
mkdeb foreign-tool all ""
mv "$work/debs/foreign-tool_9.9.9_all.deb" "$work/foreign-tool.deb"

# ------------------------------------------------------------------ keys and apt repository
"$installer/make-signing-key.sh" "$work/key" > /dev/null 2>&1
"$installer/make-signing-key.sh" "$work/key-other" --algo ed25519 --uid "not hipstack <x@invalid>" > /dev/null 2>&1
check "make-signing-key.sh: binary and armored public keys" \
    test -s "$work/key/hipstack.gpg" -a -s "$work/key/hipstack.asc" -a -s "$work/key/fingerprint"
# Run again with a gpg that cannot export: it fails, and the public keys of the first run stay whole.
mkdir -p "$work/failexport"
printf '#!/bin/sh\nfor a; do [ "$a" != --export ] || { echo "gpg: export failed (test)" >&2; exit 2; }; done\nexec /usr/bin/gpg "$@"\n' \
    > "$work/failexport/gpg"
chmod 755 "$work/failexport/gpg"
cp "$work/key/hipstack.gpg" "$work/key/hipstack.asc" "$work/"
rc=0; out=$(PATH="$work/failexport:$PATH" "$installer/make-signing-key.sh" "$work/key" 2>&1) || rc=$?
[ $rc = 1 ] && contains "$out" "could not export" && cmp -s "$work/hipstack.gpg" "$work/key/hipstack.gpg" &&
    cmp -s "$work/hipstack.asc" "$work/key/hipstack.asc" && pass "make-signing-key.sh: a failed export keeps the public keys" ||
    fail "make-signing-key.sh: failed export: rc=$rc $out"

"$installer/make-apt-repo.sh" "$work/debs" "$work/repo" --keyring "$work/key" > /dev/null
dists=$work/repo/dists/stable
check "apt repo: pool layout" test -f "$work/repo/pool/main/h/hipstack-smi-cli9.9.9/hipstack-smi-cli9.9.9_9.9.9_amd64.deb"
check "apt repo: Packages, .gz, .xz for amd64 and all" test -f "$dists/main/binary-amd64/Packages.xz" -a \
    -f "$dists/main/binary-amd64/Packages.gz" -a -f "$dists/main/binary-all/Packages"
check "apt repo: arch all packages listed in binary-amd64 too" grep -qx 'Package: hipstack-smi' "$dists/main/binary-amd64/Packages"
check "apt repo: Release Date from SOURCE_DATE_EPOCH" grep -qx 'Date: Tue, 14 Nov 2023 22:13:20 UTC' "$dists/Release"
check "apt repo: Release lists the Packages SHA256" \
    grep -q " $(sha256sum < "$dists/main/binary-amd64/Packages.xz" | cut -d' ' -f1) .* main/binary-amd64/Packages.xz" "$dists/Release"
check "apt repo: InRelease verifies" gpgv --keyring "$work/repo/hipstack.gpg" "$dists/InRelease"
check "apt repo: Release.gpg verifies" gpgv --keyring "$work/repo/hipstack.gpg" "$dists/Release.gpg" "$dists/Release"
check "apt repo: public key exported" cmp "$work/repo/hipstack.gpg" "$work/key/hipstack.gpg"
"$installer/make-apt-repo.sh" "$work/debs" "$work/repo2" --keyring "$work/key" > /dev/null
check "apt repo: reproducible (all but the signatures)" \
    diff -r -x InRelease -x Release.gpg "$work/repo" "$work/repo2"
# A second suite shares the pool.
"$installer/make-apt-repo.sh" "$work/debs" "$work/repo2" --suite testing --component extra --keyring "$work/key" > /dev/null
check "apt repo: second suite and component" grep -qx 'Components: extra' "$work/repo2/dists/testing/Release"
# Only architecture-all packages: still a binary-amd64 index that lists them.
mkdir -p "$work/debs-all"
cp "$work/debs/"*_all.deb "$work/debs-all/"
rc=0; out=$("$installer/make-apt-repo.sh" "$work/debs-all" "$work/repo-all" --keyring "$work/key" 2>&1) || rc=$?
[ $rc = 0 ] && grep -qx 'Package: hipstack-smi' "$work/repo-all/dists/stable/main/binary-amd64/Packages" &&
    grep -qx 'Architectures: amd64 all' "$work/repo-all/dists/stable/Release" &&
    pass "apt repo: only architecture-all packages" || fail "apt repo: only architecture-all packages: rc=$rc $out"
out=$("$installer/make-apt-repo.sh" "$work/debs" "$work/repo3" 2>&1 --keyring "$work/nokey"; echo "rc=$?") || true
check "apt repo: a missing keyring is a bad argument" contains "$out" "rc=2"
rc=0; out=$("$installer/make-apt-repo.sh" "$work/debs" "$work/repo3" --keyring "$work/key" --key DEADBEEF 2>&1) || rc=$?
[ $rc = 1 ] && contains "$out" "no secret key DEADBEEF in" && [ ! -e "$work/repo3/dists" ] &&
    pass "apt repo: an unknown --key is named" || fail "apt repo: unknown --key: rc=$rc $out"

# A failure while signing (a gpg that will not sign) leaves the repository as it was: not emptied,
# not unsigned. The same wrapper serves make-dnf-repo.sh below (rpmsign runs gpg -sbo).
mkdir -p "$work/failsign"
printf '#!/bin/sh\nfor a; do case "$a" in --clearsign|--detach-sign|-sb*) echo "gpg: signing failed (test)" >&2; exit 2 ;; esac; done\nexec /usr/bin/gpg "$@"\n' \
    > "$work/failsign/gpg"
chmod 755 "$work/failsign/gpg"
cp -a "$work/repo" "$work/repo-failsign"
rc=0; out=$(PATH="$work/failsign:$PATH" "$installer/make-apt-repo.sh" "$work/debs" "$work/repo-failsign" --keyring "$work/key" 2>&1) || rc=$?
[ $rc = 1 ] && contains "$out" "was not changed" && diff -r "$work/repo" "$work/repo-failsign" > /dev/null &&
    pass "apt repo: a signing failure leaves the repository as it was" ||
    { fail "apt repo: signing failure: rc=$rc $out"; diff -r "$work/repo" "$work/repo-failsign" | head -5 || true; }

# Tampered copies: a changed Packages hash inside InRelease (signature no longer matches), and a
# repository signed by another key.
cp -a "$work/repo" "$work/repo-badsig"
awk '!done && /^ [0-9a-f]+ / { c = substr($0, 2, 1); $0 = " " (c == "0" ? "1" : "0") substr($0, 3); done = 1 } { print }' \
    "$work/repo/dists/stable/InRelease" > "$work/repo-badsig/dists/stable/InRelease"
check "tampered InRelease no longer verifies" \
    bash -c "! gpgv --keyring '$work/repo/hipstack.gpg' '$work/repo-badsig/dists/stable/InRelease'"
"$installer/make-apt-repo.sh" "$work/debs" "$work/repo-otherkey" --keyring "$work/key-other" > /dev/null

# ------------------------------------------------------------------ chroot
# The Debian 12 base shared with the other chroot tests (scripts/lib/debian_chroot.sh), made hermetic
# here: no distribution repository, so apt-get update reads only ours.
# shellcheck source=../../scripts/lib/debian_chroot.sh
source "$src/scripts/lib/debian_chroot.sh"
base=$(debian_chroot_base "$cache") || skip "debootstrap failed (no network to deb.debian.org?)"
mkdir -p "$root"
tar -C "$root" -xf "$base"
: > "$root/etc/apt/sources.list"
rm -f "$root/etc/apt/sources.list.d/"*
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mount -t proc proc "$root/proc"; mounts+=("$root/proc")
mount --bind /dev/pts "$root/dev/pts"; mounts+=("$root/dev/pts")   # dpkg logs the terminal there
for r in repo repo-badsig repo-otherkey; do
    mkdir -p "$root/$r"
    mount --bind -o ro "$work/$r" "$root/$r"; mounts+=("$root/$r")
done
install -m 0755 "$installer/hipstack-install" "$root/usr/local/sbin/hipstack-install"
printf 'ID=plan9\nPRETTY_NAME="Plan 9 from Bell Labs"\n' > "$root/root/os-release-plan9"
printf 'ID=debian\nVERSION_CODENAME=forky\nPRETTY_NAME="Debian GNU/Linux forky/sid"\n' > "$root/root/os-release-sid"
inroot() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }
hi() { inroot /usr/local/sbin/hipstack-install "$@"; }
hienv() {  # hienv VAR=VALUE... -- ARGS...: hipstack-install with those variables set
    local vars=()
    while [ "$1" != -- ]; do vars+=("$1"); shift; done
    shift
    inroot "${vars[@]}" /usr/local/sbin/hipstack-install "$@"
}
# wrapper DIR COMMAND BODY: a shell script /tmp/DIR/COMMAND in the chroot (its /tmp is not part of
# the snapshot), to put ahead of the real command: hienv PATH=/tmp/DIR:/usr/sbin:/usr/bin:/sbin:/bin
wrapper() {
    mkdir -p "$root/tmp/$1"
    printf '#!/bin/sh\n%s\n' "$3" > "$root/tmp/$1/$2"
    chmod 755 "$root/tmp/$1/$2"
}
# A user locale that sorts our package names unlike C (hipstack-install must not care): en_US.UTF-8,
# compiled into the chroot's /tmp (minbase has no locales); C.UTF-8 sorts like C, so the check is
# weaker without localedef.
user_locale=(LC_ALL=C.UTF-8)
mkdir -p "$root/tmp/locale"
if localedef -i en_US -f UTF-8 "$root/tmp/locale/en_US.UTF-8" > /dev/null 2>&1 &&
   [ "$(printf 'libhipstack-smi-dev\nlibhipstack-smi9\n' | inroot LOCPATH=/tmp/locale LC_ALL=en_US.UTF-8 sort | head -1)" = libhipstack-smi9 ]; then
    user_locale=(LOCPATH=/tmp/locale LC_ALL=en_US.UTF-8)
else
    echo "note - no en_US.UTF-8 (localedef): installing under C.UTF-8, which sorts like C"
fi

# What the chroot holds before we touch it (apt's own bookkeeping files excluded). /opt is left
# out: no Debian package owns it, so dpkg removes it with the last package that shipped it.
snapshot() {  # snapshot [ROOT]
    (cd "${1:-$root}" && find . -xdev \( -path ./proc -o -path ./dnfrepo -o -path ./var/lib/dnf -o -path ./var/lib/rpm -o -path ./repo -o -path ./repo-badsig -o -path ./repo-otherkey \
        -o -path ./tmp -o -path ./var/log -o -path ./var/cache/apt -o -path ./var/cache/debconf \) -prune -o -print |
        grep -v -e '^./var/lib/dpkg/status-old$' -e '^./var/lib/dpkg/triggers/' -e '^./var/lib/apt/extended_states$' \
                -e '^./var/lib/apt/lists/lock$' -e '^./var/lib/apt/lists/partial$' -e '^./var/lib/apt/lists/auxfiles$' \
                -e '^./var/lib/dpkg/lock' -e '^./opt$' -e '^./var/cache/dnf/[a-z_]*.json$' \
                -e '^./var/cache/dnf/.gpgkeyschecked.yum$' | sort)
}
# hipstack-install creates /etc/apt/keyrings where it is missing (apt before 2.4 does not ship it).
rmdir "$root/etc/apt/keyrings"
before=$(snapshot)

# Errors first: each must be clear and change nothing.
out=$(hi --help 2>&1) && contains "$out" "--usecase=LIST" && pass "hipstack-install --help" || fail "hipstack-install --help"
rc=0; out=$(chroot --userspec=nobody:nogroup "$root" /usr/local/sbin/hipstack-install --repo file:///repo -y 2>&1) || rc=$?
[ $rc = 1 ] && contains "$out" "must run as root" && pass "not root: exit 1, clear" || fail "not root: rc=$rc $out"
rc=0; out=$(hi --repo file:///repo --usecase=smi,bogus -y 2>&1) || rc=$?
[ $rc = 2 ] && contains "$out" "unknown use case 'bogus'" && pass "unknown use case: exit 2" || fail "unknown use case: rc=$rc $out"
rc=0; out=$(hi --repo ftp://x 2>&1) || rc=$?
[ $rc = 2 ] && contains "$out" "must be an https://" && pass "bad --repo: exit 2" || fail "bad --repo: rc=$rc $out"
rc=0; out=$(hi --repo $'file:///repo\ngpgcheck=0' -y 2>&1) || rc=$?
[ $rc = 2 ] && contains "$out" "must not contain spaces" && pass "--repo with a line break: exit 2" || fail "--repo with a line break: rc=$rc $out"
rc=0; out=$(hi --repo file:///repo --suite 'stable main' -y 2>&1) || rc=$?
[ $rc = 2 ] && contains "$out" "is not a valid --suite" && pass "--suite with a space: exit 2" || fail "--suite with a space: rc=$rc $out"
rc=0; out=$(inroot HIPSTACK_OS_RELEASE=/root/os-release-plan9 /usr/local/sbin/hipstack-install --repo file:///repo -y 2>&1) || rc=$?
[ $rc = 1 ] && contains "$out" "unsupported distribution 'Plan 9 from Bell Labs'" && pass "unsupported distribution: exit 1" ||
    fail "unsupported distribution: rc=$rc $out"
# Release tracks: an unknown one is a bad argument; the current track is for Debian sid only (this
# chroot is Debian 12); on sid its default repository is BASE/current/apt; --list lists them.
rc=0; out=$(hi --track nope --repo file:///repo -y 2>&1) || rc=$?
[ $rc = 2 ] && contains "$out" "unknown track 'nope' (known: debian12 current" && pass "unknown track: exit 2" || fail "unknown track: rc=$rc $out"
rc=0; out=$(hi --track current --repo file:///repo --key /repo/hipstack.gpg -y 2>&1) || rc=$?
[ $rc = 1 ] && contains "$out" "the current track is built for Debian sid (apt); this system is Debian GNU/Linux 12" &&
    pass "--track current on Debian 12: exit 1, says which track fits" || fail "--track current on Debian 12: rc=$rc $out"
rc=0; out=$(inroot HIPSTACK_OS_RELEASE=/root/os-release-sid /usr/local/sbin/hipstack-install --track current --dry-run 2>&1) || rc=$?
[ $rc = 1 ] && contains "$out" "cannot reach the repository: https://repo.hipstack.dev/current/apt/dists/stable/InRelease" &&
    pass "--track current on sid: the track's repository (BASE/current/apt)" || fail "--track current on sid: rc=$rc $out"
out=$(hi --list 2>&1 || true)
contains "$out" "^  current  *ROCm 7.2.4 for Debian sid" && contains "$out" "^  debian12 " && pass "--list lists the release tracks" ||
    fail "--list: $out"
rc=0; out=$(hi --repo file:///nonexistent --key /repo/hipstack.gpg -y 2>&1) || rc=$?
[ $rc = 1 ] && contains "$out" "cannot reach the repository: file:///nonexistent/dists/stable/InRelease" &&
    pass "unreachable repository: exit 1" || fail "unreachable repository: rc=$rc $out"
rc=0; out=$(hi --repo file:///repo --key /repo/Release -y 2>&1) || rc=$?
[ $rc = 1 ] && contains "$out" "cannot read the key\|not an OpenPGP public key" && pass "bad key file: exit 1" ||
    fail "bad key file: rc=$rc $out"
rc=0; out=$(hi --repo file:///repo --key /repo/hipstack.gpg --usecase=smi --dry-run 2>&1) || rc=$?
[ $rc = 0 ] && contains "$out" "would write /etc/apt/sources.list.d/hipstack.sources" &&
    contains "$out" "would run: apt-get install hipstack-smi" && pass "--dry-run shows the plan" || fail "--dry-run: rc=$rc $out"

# Refused repositories: apt's own error text, and nothing left behind.
rc=0; out=$(hi --repo file:///repo-badsig --key /repo/hipstack.gpg --usecase=smi -y 2>&1) || rc=$?
[ $rc = 1 ] && contains "$out" "The following signatures were invalid\|BADSIG" && pass "tampered InRelease refused (apt: BADSIG)" ||
    fail "tampered InRelease: rc=$rc $out"
rc=0; out=$(hi --repo file:///repo-otherkey --key /repo/hipstack.gpg --usecase=smi -y 2>&1) || rc=$?
[ $rc = 1 ] && contains "$out" "NO_PUBKEY" && pass "other key refused (apt: NO_PUBKEY)" || fail "other key: rc=$rc $out"
[ "$(snapshot)" = "$before" ] && pass "errors and refusals changed nothing" ||
    { fail "errors and refusals changed nothing"; diff <(echo "$before") <(snapshot) | head || true; }

# The real install, under umask 027: what it creates must still be readable (apt reads the key as _apt).
rc=0; out=$(inroot sh -c 'umask 027; exec /usr/local/sbin/hipstack-install "$@"' sh \
                --repo file:///repo --key /repo/hipstack.gpg --usecase=smi -y 2>&1) || rc=$?
[ $rc = 0 ] && pass "hipstack-install --usecase=smi (umask 027)" || { fail "hipstack-install --usecase=smi: rc=$rc"; echo "$out"; }
grep -qx "track=debian12" "$root/var/lib/hipstack-install/repository" && pass "the record names the track (debian12, the default)" ||
    fail "the record: $(cat "$root/var/lib/hipstack-install/repository")"
modes=$(cd "$root" && stat -c '%a %n' etc/apt/keyrings etc/apt/keyrings/hipstack.gpg etc/apt/sources.list.d/hipstack.sources \
                                   var/lib/hipstack-install var/lib/hipstack-install/* 2>&1)
[ "$(awk '{print $1}' <<< "$modes" | sort -u | tr '\n' ' ')" = "644 755 " ] &&
    [ "$(awk '$1 == 755 {print $2}' <<< "$modes" | tr '\n' ' ')" = "etc/apt/keyrings var/lib/hipstack-install " ] &&
    pass "under umask 027: folders 0755, key, sources and record 0644" || fail "modes under umask 027: $modes"
contains "$out" "^\(W\|E\|Err\):" && fail "apt printed warnings: $(grep '^\(W\|E\|Err\):' <<< "$out")" || pass "apt-get update: no warning"
check "hipstack-smi-cli9.9.9 installed" inroot dpkg-query -W -f '${Status}' hipstack-smi-cli9.9.9
[ "$(inroot /opt/hipstack-9.9.9/bin/hipstack-smi)" = "hipstack-smi 9.9.9" ] && pass "installed program runs" || fail "installed program runs"
check "apt verified and kept InRelease" test -s "$root/var/lib/apt/lists/_repo_dists_stable_InRelease"
check "sources in deb822 form with Signed-By" grep -qx 'Signed-By: /etc/apt/keyrings/hipstack.gpg' "$root/etc/apt/sources.list.d/hipstack.sources"
check "keyring installed" cmp "$root/etc/apt/keyrings/hipstack.gpg" "$work/repo/hipstack.gpg"
out=$(inroot apt-get update 2>&1) && ! contains "$out" "^\(W\|E\|Err\):" && pass "apt-get update afterwards: clean" ||
    fail "apt-get update afterwards: $out"
check "dev not installed by --usecase=smi" bash -c "! chroot '$root' dpkg-query -W -f '\${Status}' hipstack-dev 2>/dev/null | grep -q installed"
check "recorded what it installed" grep -qx 'hipstack-smi-cli9.9.9' "$root/var/lib/hipstack-install/installed"
out=$(hi --list 2>&1) || true
contains "$out" "^  smi  *hipstack-smi " && contains "$out" "\* hipstack-smi-cli9.9.9  *9.9.9" &&
    contains "$out" "Repository (added by hipstack-install): file:///repo" && pass "--list" || fail "--list: $out"
# A failed install records nothing, not even what something else installed meanwhile.
cp "$work/foreign-tool.deb" "$root/tmp/foreign-tool.deb"
cp "$root/var/lib/hipstack-install/installed" "$work/installed.before"
wrapper failinst apt-get 'case " $* " in *" -s "*) ;; *" install "*) dpkg -i /tmp/foreign-tool.deb > /dev/null 2>&1; echo "E: install broken" >&2; exit 100 ;; esac
exec /usr/bin/apt-get "$@"'
rc=0; out=$(hienv PATH=/tmp/failinst:/usr/sbin:/usr/bin:/sbin:/bin -- --repo file:///repo --key /repo/hipstack.gpg --usecase=all -y 2>&1) || rc=$?
[ $rc = 1 ] && contains "$out" "nothing was recorded" && cmp -s "$work/installed.before" "$root/var/lib/hipstack-install/installed" &&
    pass "a failed install records nothing" || { fail "a failed install records nothing: rc=$rc"; echo "$out"; diff "$work/installed.before" "$root/var/lib/hipstack-install/installed" || true; }
inroot dpkg -P foreign-tool > /dev/null
# A second use case adds to the record (under another locale); a package something else installs
# meanwhile is not recorded, and --uninstall leaves it.
wrapper alsoinst apt-get '/usr/bin/apt-get "$@"; rc=$?
case " $* " in *" -s "*) ;; *" install "*) dpkg -i /tmp/foreign-tool.deb > /dev/null 2>&1 ;; esac
exit $rc'
rc=0; out=$(hienv PATH=/tmp/alsoinst:/usr/sbin:/usr/bin:/sbin:/bin "${user_locale[@]}" -- --repo file:///repo --key /repo/hipstack.gpg --usecase=all -y 2>&1) || rc=$?
[ $rc = 0 ] && grep -qx hipstack-dev "$root/var/lib/hipstack-install/installed" &&
    grep -qx libhipstack-smi-dev "$root/var/lib/hipstack-install/installed" &&
    pass "second run (--usecase=all, ${user_locale[*]}) adds to the record" || { fail "second run: rc=$rc"; echo "$out"; }
check "foreign-tool was installed meanwhile (the test's premise)" inroot dpkg-query -W foreign-tool
check "what something else installed meanwhile is not recorded" bash -c "! grep -x foreign-tool '$root/var/lib/hipstack-install/installed'"
check "the record is in C order whatever the user's locale" env LC_ALL=C sort -c "$root/var/lib/hipstack-install/installed"

# A re-run with the wrong key is refused and leaves the working setup of the earlier runs as it was
# (key, sources, record, apt's lists); apt-get update stays clean.
ours() { (cd "$root" && sha256sum etc/apt/keyrings/hipstack.* etc/apt/sources.list.d/hipstack.sources \
                                  var/lib/hipstack-install/* var/lib/apt/lists/_repo_* 2>&1); }
saved=$(ours)
rc=0; out=$(hi --repo file:///repo --key /repo-otherkey/hipstack.asc --usecase=smi -y 2>&1) || rc=$?
[ $rc = 1 ] && contains "$out" "NO_PUBKEY" && pass "re-run with the wrong key: refused" || fail "re-run with the wrong key: rc=$rc $out"
[ "$(ours)" = "$saved" ] && pass "re-run with the wrong key: key, sources, record and lists as before" ||
    { fail "re-run with the wrong key changed the setup"; diff <(echo "$saved") <(ours) || true; }
out=$(inroot apt-get update 2>&1) && ! contains "$out" "^\(W\|E\|Err\):" && pass "apt-get update after the refused re-run: clean" ||
    fail "apt-get update after the refused re-run: $out"
# A re-run with the key in armored form replaces the binary keyring.
rc=0; out=$(hi --repo file:///repo --key /repo/hipstack.asc --usecase=smi -y 2>&1) || rc=$?
[ $rc = 0 ] && [ -f "$root/etc/apt/keyrings/hipstack.asc" ] && [ ! -e "$root/etc/apt/keyrings/hipstack.gpg" ] &&
    grep -qx 'Signed-By: /etc/apt/keyrings/hipstack.asc' "$root/etc/apt/sources.list.d/hipstack.sources" &&
    pass "re-run with the armored key: hipstack.asc replaces hipstack.gpg" || { fail "re-run with the armored key: rc=$rc"; echo "$out"; }
out=$(inroot apt-get update 2>&1) && ! contains "$out" "^\(W\|E\|Err\):" && pass "apt-get update with the armored key: clean" ||
    fail "apt-get update with the armored key: $out"

# Uninstall refuses when apt cannot simulate the removal (it would not know what else goes).
wrapper nosim apt-get 'case " $* " in *" -s "*) echo "E: simulation broken" >&2; exit 100 ;; esac; exec /usr/bin/apt-get "$@"'
rc=0; out=$(hienv PATH=/tmp/nosim:/usr/sbin:/usr/bin:/sbin:/bin -- --uninstall -y 2>&1) || rc=$?
[ $rc = 1 ] && contains "$out" "cannot simulate removing" && inroot dpkg-query -W -f '${Status}' hipstack-dev 2>/dev/null | grep 'ok installed' >/dev/null &&
    pass "--uninstall: a failing apt-get -s is an error, nothing removed" || fail "--uninstall with a failing simulation: rc=$rc $out"

# Uninstall (under C, installed under another locale): no package, file, key, index or record of ours is left.
rc=0; out=$(hienv LC_ALL=C -- --uninstall -y 2>&1) || rc=$?
[ $rc = 0 ] && pass "--uninstall" || { fail "--uninstall: rc=$rc"; echo "$out"; }
left=$(inroot dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' 'hipstack*' 'libhipstack*' 2>/dev/null | grep -v '^un' || true)
[ -z "$left" ] && pass "no hipstack package left" || fail "packages left: $left"
check "--uninstall leaves what something else installed" inroot dpkg-query -W foreign-tool
inroot dpkg -P foreign-tool > /dev/null
after=$(snapshot)
[ "$after" = "$before" ] && pass "uninstall leaves nothing of ours (file list as before)" ||
    { fail "uninstall leaves nothing of ours"; diff <(echo "$before") <(echo "$after") | head -20 || true; }
rc=0; out=$(hi --uninstall -y 2>&1) || rc=$?
[ $rc = 0 ] && contains "$out" "nothing to uninstall" && pass "--uninstall again: nothing to do" || fail "--uninstall again: $out"

# ------------------------------------------------------------------ dnf side
# hipstack-install's dnf path, in a Debian chroot that has dnf and rpm and says it is Fedora
# (HIPSTACK_OS_RELEASE). Its base is cached too; making it needs deb.debian.org (else: a note).
dnf_chroot() {
    local dbase=$cache/debian12-minbase-dnf.tar droot2=$work/droot2 rc out dbefore
    if [ ! -s "$dbase" ]; then
        echo "# adding dnf and rpm to the chroot base (once)"
        mkdir -p "$work/dbase"
        tar -C "$work/dbase" -xf "$base"
        cp /etc/resolv.conf "$work/dbase/etc/resolv.conf" 2>/dev/null || true
        echo 'deb http://deb.debian.org/debian bookworm main' > "$work/dbase/etc/apt/sources.list"
        mount -t proc proc "$work/dbase/proc"
        rc=0
        chroot "$work/dbase" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
            sh -c 'apt-get update -q && apt-get install -y -q --no-install-recommends dnf rpm && apt-get clean' \
            > "$work/dbase.log" 2>&1 || rc=$?
        umount "$work/dbase/proc"
        if [ $rc != 0 ]; then tail -3 "$work/dbase.log"; fail "could not add dnf to the chroot base (deb.debian.org?): its checks not run"; return 0; fi
        : > "$work/dbase/etc/apt/sources.list"
        rm -rf "$work/dbase/var/lib/apt/lists/"*
        # Debian's rpm keeps its database in ~/.rpmdb; Fedora's (and dnf's) is /var/lib/rpm.
        mkdir -p "$work/dbase/etc/rpm"
        echo '%_dbpath /var/lib/rpm' > "$work/dbase/etc/rpm/macros"
        tar -C "$work/dbase" -cf "$dbase.tmp" . && mv "$dbase.tmp" "$dbase"
        rm -rf "$work/dbase"
    fi
    mkdir -p "$droot2"
    tar -C "$droot2" -xf "$dbase"
    mount -t proc proc "$droot2/proc"; mounts+=("$droot2/proc")
    mkdir -p "$droot2/dnfrepo"
    mount --bind -o ro "$work/dnf" "$droot2/dnfrepo"; mounts+=("$droot2/dnfrepo")
    install -m 0755 "$installer/hipstack-install" "$droot2/usr/local/sbin/hipstack-install"
    printf 'ID=fedora\nVERSION_ID=39\nPRETTY_NAME="Fedora Linux 39 (test)"\n' > "$droot2/root/os-release-fedora"
    dbefore=$(snapshot "$droot2")
    hid() { chroot "$droot2" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
                HIPSTACK_OS_RELEASE=/root/os-release-fedora /usr/local/sbin/hipstack-install "$@"; }
    hidpath() { local path=$1; shift; chroot "$droot2" /usr/bin/env -i PATH="$path" HOME=/root \
                HIPSTACK_OS_RELEASE=/root/os-release-fedora /usr/local/sbin/hipstack-install "$@"; }
    # Something else installs foreign-tool right after dnf: not recorded (not in hipstack-smi's closure).
    cp "$work/rpms-user/foreign-tool-1-1.noarch.rpm" "$droot2/tmp/"
    mkdir -p "$droot2/tmp/alsoinst"
    printf '#!/bin/sh\n/usr/bin/dnf "$@"; rc=$?\ncase " $* " in *" install "*) rpm --force-debian -i /tmp/foreign-tool-1-1.noarch.rpm > /dev/null 2>&1 ;; esac\nexit $rc\n' \
        > "$droot2/tmp/alsoinst/dnf"
    chmod 755 "$droot2/tmp/alsoinst/dnf"
    rc=0; out=$(hidpath /tmp/alsoinst:/usr/sbin:/usr/bin:/sbin:/bin --repo file:///dnfrepo --usecase=smi -y 2>&1) || rc=$?
    [ $rc = 0 ] && pass "dnf: hipstack-install --usecase=smi" || { fail "dnf: hipstack-install: rc=$rc"; echo "$out"; }
    [ "$(cat "$droot2/var/lib/hipstack-install/installed" 2>/dev/null)" = $'hipstack-smi\nhipstack-smi-cli9.9.9\nhipstack-smi-doc9.9.9' ] &&
        chroot "$droot2" rpm -q foreign-tool > /dev/null 2>&1 && pass "dnf: recorded its packages, not what something else installed meanwhile" ||
        fail "dnf: record: $(cat "$droot2/var/lib/hipstack-install/installed" 2>&1)"
    check "dnf: repo file with gpgcheck and repo_gpgcheck" \
        bash -c "grep -qx gpgcheck=1 '$droot2/etc/yum.repos.d/hipstack.repo' && grep -qx repo_gpgcheck=1 '$droot2/etc/yum.repos.d/hipstack.repo'"
    [ "$(chroot "$droot2" /opt/hipstack-9.9.9/bin/hipstack-smi)" = "hipstack-smi 9.9.9" ] &&
        pass "dnf: installed program runs" || fail "dnf: installed program runs"
    out=$(hid --list 2>&1) || true
    contains "$out" "\* hipstack-smi-cli9.9.9 " && pass "dnf: --list" || fail "dnf: --list: $out"
    # A re-run with the wrong key is refused by the check from temporary copies, and one whose
    # final refresh fails (a dnf wrapper) is undone: either way the setup is as it was.
    dours() { (cd "$droot2" && sha256sum etc/pki/rpm-gpg/RPM-GPG-KEY-hipstack etc/yum.repos.d/hipstack.repo \
                                          var/lib/hipstack-install/* 2>&1; chroot "$droot2" rpm -qa gpg-pubkey | sort); }
    dsaved=$(dours)
    cp "$work/dnf-other/hipstack.asc" "$droot2/tmp/other.asc"
    rc=0; out=$(hid --repo file:///dnfrepo --key /tmp/other.asc --usecase=smi -y 2>&1) || rc=$?
    [ $rc = 1 ] && contains "$out" "does not accept" && [ "$(dours)" = "$dsaved" ] &&
        pass "dnf: re-run with the wrong key: refused, setup as before" || { fail "dnf: re-run with the wrong key: rc=$rc $out"; diff <(echo "$dsaved") <(dours) || true; }
    mkdir -p "$droot2/tmp/norefresh"
    printf '#!/bin/sh\ncase " $* " in *" makecache "*) case " $* " in *reposdir=*) ;; *) echo "Error: refresh broken" >&2; exit 1 ;; esac ;; esac\nexec /usr/bin/dnf "$@"\n' \
        > "$droot2/tmp/norefresh/dnf"
    chmod 755 "$droot2/tmp/norefresh/dnf"
    rc=0; out=$(hidpath /tmp/norefresh:/usr/sbin:/usr/bin:/sbin:/bin --repo file:///dnfrepo --usecase=smi -y 2>&1) || rc=$?
    [ $rc = 1 ] && contains "$out" "as it was before this run" && [ "$(dours)" = "$dsaved" ] &&
        pass "dnf: a refresh failing after the swap is undone" || { fail "dnf: refresh failing after the swap: rc=$rc $out"; diff <(echo "$dsaved") <(dours) || true; }
    # A package of the user's needs one of ours: --uninstall refuses and names it (rpm's message,
    # parsed under LC_ALL=C); and it refuses when rpm cannot simulate the removal at all.
    cp "$work/rpms-user/user-tool-1-1.noarch.rpm" "$droot2/tmp/"
    chroot "$droot2" rpm --force-debian -i /tmp/user-tool-1-1.noarch.rpm > /dev/null 2>&1
    rc=0; out=$(hid --uninstall -y 2>&1) || rc=$?
    [ $rc = 1 ] && contains "$out" "other packages depend on what hipstack-install installed: user-tool-1-1.noarch" &&
        chroot "$droot2" rpm -q hipstack-smi-cli9.9.9 > /dev/null 2>&1 &&
        pass "dnf: --uninstall refuses to take a user's package with it" || fail "dnf: --uninstall with a dependent user package: rc=$rc $out"
    chroot "$droot2" rpm --force-debian -e user-tool > /dev/null 2>&1
    mkdir -p "$droot2/tmp/norpm"
    printf '#!/bin/sh\ncase " $* " in *" --test "*) echo "error: rpmdb broken" >&2; exit 1 ;; esac\nexec /usr/bin/rpm "$@"\n' > "$droot2/tmp/norpm/rpm"
    chmod 755 "$droot2/tmp/norpm/rpm"
    rc=0; out=$(hidpath /tmp/norpm:/usr/sbin:/usr/bin:/sbin:/bin --uninstall -y 2>&1) || rc=$?
    [ $rc = 1 ] && contains "$out" "cannot simulate removing" && chroot "$droot2" rpm -q hipstack-smi-cli9.9.9 > /dev/null 2>&1 &&
        pass "dnf: a failing rpm -e --test is an error, nothing removed" || fail "dnf: --uninstall with a failing simulation: rc=$rc $out"
    rc=0; out=$(hid --uninstall -y 2>&1) || rc=$?
    [ $rc = 0 ] && pass "dnf: --uninstall" || { fail "dnf: --uninstall: rc=$rc"; echo "$out"; }
    check "dnf: --uninstall leaves what something else installed" chroot "$droot2" rpm -q foreign-tool
    chroot "$droot2" rpm --force-debian -e foreign-tool > /dev/null 2>&1
    out=$(chroot "$droot2" rpm -qa 2>/dev/null)
    [ -z "$out" ] && pass "dnf: no package and no imported key left" || fail "dnf: rpm -qa after uninstall: $out"
    [ "$(snapshot "$droot2")" = "$dbefore" ] && pass "dnf: uninstall leaves nothing of ours" ||
        { fail "dnf: uninstall leaves nothing of ours"; diff <(echo "$dbefore") <(snapshot "$droot2") | head -20 || true; }
}

# ------------------------------------------------------------------ dnf side, host tools
if command -v rpmbuild >/dev/null && command -v createrepo_c >/dev/null; then
    top=$work/rpmbuild
    mkdir -p "$top/SPECS" "$work/rpms"
    cat > "$top/SPECS/t.spec" <<'EOF'
Name: hipstack-smi-cli9.9.9
Version: 9.9.9
Release: 1
Summary: hipstack-install test package
License: MIT
BuildArch: noarch
AutoReqProv: no
%description
hipstack-install test package.
%install
mkdir -p %{buildroot}/opt/hipstack-9.9.9/bin
printf '#!/bin/sh\necho "hipstack-smi 9.9.9"\n' > %{buildroot}/opt/hipstack-9.9.9/bin/hipstack-smi
chmod 755 %{buildroot}/opt/hipstack-9.9.9/bin/hipstack-smi
%files
%dir /opt/hipstack-9.9.9
%dir /opt/hipstack-9.9.9/bin
/opt/hipstack-9.9.9/bin/hipstack-smi
EOF
    cat > "$top/SPECS/meta.spec" <<'EOF'
Name: hipstack-smi
Version: 9.9.9
Release: 1
Summary: hipstack-install test meta package
License: MIT
BuildArch: noarch
Requires: hipstack-smi-cli9.9.9 = 9.9.9
Recommends: hipstack-smi-doc9.9.9
%description
hipstack-install test meta package.
%files
EOF
    # A weak dependency: dnf installs it, so hipstack-install must record it (and --uninstall remove it).
    cat > "$top/SPECS/doc.spec" <<'EOF'
Name: hipstack-smi-doc9.9.9
Version: 9.9.9
Release: 1
Summary: hipstack-install test package (recommended)
License: MIT
BuildArch: noarch
%description
hipstack-install test package.
%files
EOF
    cat > "$top/SPECS/user.spec" <<'EOF'
Name: user-tool
Version: 1
Release: 1
Summary: a package of the user's that needs one of ours (not in the repository)
License: MIT
BuildArch: noarch
Requires: hipstack-smi-cli9.9.9
%description
A user's package.
%files
EOF
    cat > "$top/SPECS/foreign.spec" <<'EOF'
Name: foreign-tool
Version: 1
Release: 1
Summary: what something else installs while hipstack-install runs (not in the repository)
License: MIT
BuildArch: noarch
%description
Not ours.
%files
EOF
    for spec in t meta doc user foreign; do
        rpmbuild -bb --quiet --define "_topdir $top" --define "_rpmdir $work/rpms" \
            --define "_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm" "$top/SPECS/$spec.spec" > /dev/null 2>&1
    done
    mkdir -p "$work/rpms-user"
    mv "$work/rpms/user-tool-1-1.noarch.rpm" "$work/rpms/foreign-tool-1-1.noarch.rpm" "$work/rpms-user/"
    "$installer/make-dnf-repo.sh" "$work/rpms" "$work/dnf" --keyring "$work/key" > /dev/null
    check "dnf repo: repomd.xml and primary" test -s "$work/dnf/repodata/repomd.xml"
    # A failure while signing the packages, or repomd.xml, leaves the repository as it was; an
    # rpmsign that signs nothing (and exits 0) is caught by the check of every signature.
    mkdir -p "$work/nosign"
    printf '#!/bin/sh\nexit 0\n' > "$work/nosign/rpmsign"
    chmod 755 "$work/nosign/rpmsign"
    for how in "failsign:" "failsign:--no-rpm-sign" "nosign:"; do
        cp -a "$work/dnf" "$work/dnf-fail"
        rc=0; out=$(PATH="$work/${how%%:*}:$PATH" "$installer/make-dnf-repo.sh" "$work/rpms" "$work/dnf-fail" --keyring "$work/key" ${how#*:} 2>&1) || rc=$?
        [ $rc = 1 ] && contains "$out" "was not changed" && diff -r "$work/dnf" "$work/dnf-fail" > /dev/null &&
            pass "dnf repo: ${how%%:*} ${how#*:}: refused, the repository as it was" ||
            { fail "dnf repo: ${how%%:*} ${how#*:}: rc=$rc $out"; diff -r "$work/dnf" "$work/dnf-fail" | head -5 || true; }
        rm -rf "$work/dnf-fail"
    done
    # Reproducible metadata (with SOURCE_DATE_EPOCH; unsigned packages, as signing stamps them).
    "$installer/make-dnf-repo.sh" "$work/rpms" "$work/dnf-r1" --keyring "$work/key" --no-rpm-sign > /dev/null
    "$installer/make-dnf-repo.sh" "$work/rpms" "$work/dnf-r2" --keyring "$work/key" --no-rpm-sign > /dev/null
    check "dnf repo: reproducible (all but repomd.xml.asc)" diff -r -x repomd.xml.asc "$work/dnf-r1" "$work/dnf-r2"
    rc=0; out=$("$installer/make-dnf-repo.sh" "$work/rpms" "$work/dnf3" --keyring "$work/key" --key DEADBEEF 2>&1) || rc=$?
    [ $rc = 1 ] && contains "$out" "no secret key DEADBEEF in" && pass "dnf repo: an unknown --key is named" ||
        fail "dnf repo: unknown --key: rc=$rc $out"
    export GNUPGHOME=$work/verify-gnupg
    mkdir -m 700 "$GNUPGHOME"
    gpg --batch --quiet --import "$work/dnf/hipstack.asc" 2>/dev/null
    check "dnf repo: gpg --verify repomd.xml.asc" gpg --batch --verify "$work/dnf/repodata/repomd.xml.asc" "$work/dnf/repodata/repomd.xml"
    cp "$work/dnf/repodata/repomd.xml" "$work/repomd-tampered.xml"
    sed -i 's/<revision>/<revision>1/' "$work/repomd-tampered.xml"
    check "dnf repo: a changed repomd.xml fails gpg --verify" \
        bash -c "! gpg --batch --verify '$work/dnf/repodata/repomd.xml.asc' '$work/repomd-tampered.xml'"
    gpgconf --kill gpg-agent 2>/dev/null || true
    unset GNUPGHOME
    rpmfile=$work/dnf/Packages/h/hipstack-smi-cli9.9.9-9.9.9-1.noarch.rpm
    rroot=$work/rpmroot
    mkdir -p "$rroot"
    rpm --root "$rroot" --import "$work/dnf/hipstack.asc"
    check "rpm: package signature verifies (rpm -K)" bash -c "rpm --root '$rroot' -K '$rpmfile' | grep 'digests signatures OK' >/dev/null"
    check "rpm: not signed with another key" bash -c "! rpm --root '$work/rpmroot-empty' -K '$rpmfile' 2>/dev/null | grep 'signatures OK' >/dev/null"
    check "rpm --root: install" rpm --root "$rroot" --force-debian -i "$rpmfile"
    check "rpm --root: file in place" test -x "$rroot/opt/hipstack-9.9.9/bin/hipstack-smi"
    check "rpm --root: erase" rpm --root "$rroot" --force-debian -e hipstack-smi-cli9.9.9
    check "rpm --root: nothing left in /opt" bash -c "[ -z \"\$(ls -A '$rroot/opt')\" ]"
    if command -v dnf >/dev/null; then
        droot=$work/dnfroot
        dnfrun() {  # dnfrun REPO_DIR ARGS...: dnf into $droot with only that repository, fully checked
            local repodir=$1; shift
            dnf -y -q --installroot "$droot" --releasever 39 --setopt=reposdir=/dev/null \
                --setopt=cachedir="$work/dnfcache" --repofrompath "hipstack,file://$repodir" --repo hipstack \
                --setopt=hipstack.gpgcheck=1 --setopt=hipstack.repo_gpgcheck=1 \
                --setopt=hipstack.gpgkey="file://$work/dnf/hipstack.asc" "$@"
        }
        check "dnf --installroot: install from the signed repository" dnfrun "$work/dnf" install hipstack-smi-cli9.9.9
        check "dnf --installroot: file in place" test -x "$droot/opt/hipstack-9.9.9/bin/hipstack-smi"
        check "dnf --installroot: remove" dnfrun "$work/dnf" remove hipstack-smi-cli9.9.9
        check "dnf --installroot: nothing left in /opt" bash -c "[ -z \"\$(ls -A '$droot/opt')\" ]"
        "$installer/make-dnf-repo.sh" "$work/rpms" "$work/dnf-other" --keyring "$work/key-other" > /dev/null
        rm -rf "$work/dnfcache"
        rc=0; out=$(dnfrun "$work/dnf-other" install hipstack-smi-cli9.9.9 2>&1) || rc=$?
        [ $rc != 0 ] && pass "dnf refuses a repository signed with another key" || fail "dnf accepted another key: $out"
        dnf_chroot
    else
        fail "dnf is not installed (scripts/deps.sh test installs it): dnf --installroot checks not run"
    fi
else
    fail "rpmbuild or createrepo_c missing (scripts/deps.sh test installs rpm createrepo-c): dnf side not run"
fi

[ $failures = 0 ]
