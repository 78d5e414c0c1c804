#!/usr/bin/env bash
# The superbuild's release as users meet it (docs/superbuild.md, docs/install.md), from what
# `superbuild/build.sh OUTDIR` left:
#   - every package of the manifest (the in-tree ones, the relocated AMD ones, the metapackages) as .deb
#     and .rpm; lintian and rpmlint report no errors on any of them;
#   - the signed repositories verify (InRelease, Release.gpg, repomd.xml.asc, each rpm's signature,
#     the wheel's SHA256SUMS.asc and its hash);
#   - in a Debian 12 chroot: the apt repository added as users do (file://, Signed-By), `apt-get install
#     hipstack`; hipstack-smi, hipstack-info and hipstack-smid from /opt/hipstack; a HIP program
#     compiled for gfx90a with the installed hipcc holds gfx90a code and loads the installed runtime;
#     rocminfo from the prefix gives its "no GPU" answer; the wheel, pip-installed from the release's
#     folder, reads the capture through the installed library; a tampered repository is refused with apt's
#     error; purge leaves no file of ours;
#   - rpm: every rpm installs into an rpm --root and erases without leaving a file.
#   test_release.sh OUTDIR CAPTURE_SYS_DIR CACHE_DIR
# Exit 0 pass, 1 fail, 77 skip (not root, a tool missing, no network for debootstrap).
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: test_release.sh OUTDIR CAPTURE_SYS_DIR CACHE_DIR" >&2; exit 2; }
out=$(realpath "$1") capture=$(realpath "$2") cache=$3
here=$(dirname "$(realpath "$0")")
# shellcheck source=../../scripts/lib/debian_chroot.sh
source "$here/../../scripts/lib/debian_chroot.sh"
skip() { echo "SKIP: $1"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot, mount)"
for tool in debootstrap lintian rpmlint rpm gpg gpgv python3 flock; do
  command -v "$tool" >/dev/null || skip "$tool is not installed"
done
manifest=$out/stage/manifest.json
[ -f "$manifest" ] && [ -f "$out/packages/.done" ] || { echo "FAIL: $out holds no finished superbuild (run superbuild/build.sh $out)"; exit 1; }
read -r v prefix < <(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["version"], m["prefix"])' "$manifest")
pkgs=$out/packages

# shellcheck source=../lib/checks.sh
source "$here/../lib/checks.sh"
# shellcheck source=../lib/release_packages.sh
source "$here/../lib/release_packages.sh"
# shellcheck source=../lib/apt_repo.sh
source "$here/../lib/apt_repo.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/hipstack-release-test.XXXXXX")
root=$work/root
cleanup() {
  debian_chroot_umount "$root"
  rm -rf "$work"
  echo "# $failures failure(s)"
}
trap cleanup EXIT

echo "== the packages of release $v"
# Every package the manifest names (components' package rules and metapackages), in both formats.
release_packages_check "$manifest" "$pkgs" "the manifest"
for p in hipstack hipstack-runtime hipstack-dev "hipstack-amd-runtime$v" "hipstack-amd-compiler$v"; do
  [[ " ${names[*]} " == *" $p "* ]] || fail "the manifest makes no package $p"
done

# The validation kernels are linked against the prefix's HIP runtime (RUNPATH $ORIGIN/../../../lib):
# the package depends on the release's runtime package by name, never on Debian's libamdhip64 (which
# dpkg-shlibdeps would name on a machine that has it, and fail on one that has not).
val_deb=$pkgs/hipstack-validation${v}_$v-1_amd64.deb
val_depends=$(dpkg-deb -f "$val_deb" Depends 2>&1 || true)
grep -F "hipstack-amd-runtime$v (= $v-1)" <<<"$val_depends" >/dev/null &&
  ! grep -E 'libamdhip64|libhsa-runtime64|libamd-comgr' <<<"$val_depends" >/dev/null &&
  pass "hipstack-validation$v depends on hipstack-amd-runtime$v, not on Debian's HIP" ||
  fail "hipstack-validation$v Depends: $val_depends"
kernels=$(dpkg-deb -c "$val_deb" 2>/dev/null | grep -c "\.$prefix/libexec/hipstack/validation/[^/]\+$" || true)
[ "$kernels" -ge 7 ] && pass "hipstack-validation$v holds the $kernels validation kernels" || fail "hipstack-validation$v holds $kernels kernels"

lintian --tag-display-limit 0 "$pkgs"/*.deb > "$work/lintian.out" 2>&1 || true
if grep '^E: ' "$work/lintian.out" > "$work/lintian.errors"; then
  fail "lintian: $(wc -l < "$work/lintian.errors") error(s):"; cat "$work/lintian.errors"
else
  pass "lintian: no errors ($(grep -c '^W: ' "$work/lintian.out" || true) warnings, each justified in docs/packaging.md)"
fi
mapfile -t rpms < <(ls "$pkgs"/*.rpm)
# The in-tree packages' filters and those of the AMD packages (rpmlint takes one file).
cat "$here/../../superbuild/packaging/rpmlintrc" "$here/../../superbuild/packaging/rpmlintrc-amd" > "$work/rpmlintrc"
rpmlint -r "$work/rpmlintrc" "${rpms[@]}" > "$work/rpmlint.out" 2>&1 || true
summary=$(grep -E '[0-9]+ errors, [0-9]+ warnings' "$work/rpmlint.out" || true)
if grep -E ' 0 errors, ' <<<"$summary" >/dev/null; then pass "rpmlint:$summary"
else fail "rpmlint: ${summary:-no summary}"; grep ' E: ' "$work/rpmlint.out" || tail -20 "$work/rpmlint.out"; fi

echo "== the signed repositories"
apt_repo=$out/repo/apt dnf_repo=$out/repo/dnf
check "apt: InRelease verifies with the published key" gpgv --keyring "$apt_repo/hipstack.gpg" "$apt_repo/dists/stable/InRelease"
check "apt: Release.gpg verifies" gpgv --keyring "$apt_repo/hipstack.gpg" "$apt_repo/dists/stable/Release.gpg" "$apt_repo/dists/stable/Release"
check "dnf: repomd.xml.asc verifies" gpgv --keyring "$apt_repo/hipstack.gpg" "$dnf_repo/repodata/repomd.xml.asc" "$dnf_repo/repodata/repomd.xml"
python_repo=$out/repo/python
check "python: SHA256SUMS.asc verifies" gpgv --keyring "$apt_repo/hipstack.gpg" "$python_repo/SHA256SUMS.asc" "$python_repo/SHA256SUMS"
wheel=$(compgen -G "$python_repo/hipstack-$v-py3-none-any.whl" || true)
[ -n "$wheel" ] && (cd "$python_repo" && sha256sum --quiet --strict -c SHA256SUMS) &&
  pass "python: the wheel $(basename "$wheel") matches SHA256SUMS" || fail "python: no hipstack-$v wheel matching SHA256SUMS in $python_repo"
mkdir -p "$work/rpmdb"
rpm --dbpath "$work/rpmdb" --initdb
rpm --dbpath "$work/rpmdb" --import "$dnf_repo/hipstack.asc"
mapfile -t repo_rpms < <(find "$dnf_repo" -name '*.rpm' | sort)
unsigned=$(rpm --dbpath "$work/rpmdb" -K "${repo_rpms[@]}" 2>&1 | grep -v ': digests signatures OK$' || true)
[ ${#repo_rpms[@]} -gt 0 ] && [ -z "$unsigned" ] && pass "dnf: all ${#repo_rpms[@]} rpms carry a good signature" ||
  fail "dnf: rpm signatures: ${unsigned:-no rpm in the repository}"

echo "== apt-get install hipstack in a Debian 12 chroot"
base=$(debian_chroot_base "$cache") || skip "debootstrap failed (no network to deb.debian.org?)"
debian_chroot_unpack "$base" "$root" debian
mkdir -p "$root/srv/hipstack-apt" "$root/srv/hipstack-python" "$root/srv/capture" "$root/srv/tampered"
mount --bind -o ro "$apt_repo" "$root/srv/hipstack-apt"
mount --bind -o ro "$python_repo" "$root/srv/hipstack-python"
cp -r "$capture"/. "$root/srv/capture/"
cp "$here/saxpy.hip" "$root/srv/saxpy.hip"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive sh -c "$1"; }
# What a minimal system has, and pip (the wheel's users have it; installed before the purge check's
# first look, so that it is not taken for something of ours left behind).
in_root "apt-get update -qq && apt-get install -y -qq ca-certificates python3-pip >/dev/null"
before=$(in_root "find / -xdev \( -path /proc -o -path /srv -o -path /tmp -o -path /var/log -o -path /var/cache -o -path /var/lib/apt -o -path /var/lib/dpkg \) -prune -o -print" | sort)
hipstack_apt_source "$root" "$apt_repo/hipstack.gpg" file:///srv/hipstack-apt
rc=0; in_root "apt-get update" > "$work/update.out" 2>&1 || rc=$?
[ $rc = 0 ] && ! grep '^\(W\|E\|Err\):' "$work/update.out" >/dev/null && pass "apt-get update: our repository verified, no warning" ||
  { fail "apt-get update (rc=$rc)"; cat "$work/update.out"; }
start=$(date +%s)
rc=0; in_root "apt-get install -y -q hipstack" > "$work/install.out" 2>&1 || rc=$?
[ $rc = 0 ] && pass "apt-get install hipstack ($(( $(date +%s) - start )) s)" || { fail "apt-get install hipstack (rc=$rc)"; tail -30 "$work/install.out"; }
for p in "hipstack-smi-cli$v" "hipstack-monitor$v" "hipstack-validation$v" "hipstack-amd-runtime$v" "hipstack-amd-compiler$v" \
         "hipstack-amd-libs$v" "hipstack-smi-dev$v" "hipstack-amd-runtime-dev$v" "hipstack-hip-portability$v"; do
  [ "$(in_root "dpkg-query -W -f='\${Status}' $p" 2>/dev/null)" = "install ok installed" ] && pass "installed: $p" || fail "not installed: $p"
done
[ "$(in_root "readlink -f /opt/hipstack")" = "$prefix" ] && pass "/opt/hipstack is $prefix" || fail "/opt/hipstack: $(in_root "readlink -f /opt/hipstack")"
got=$(in_root "/opt/hipstack/bin/hipstack-smi version" 2>&1 || true)
grep -F "$v" <<<"$got" >/dev/null && pass "hipstack-smi version: $v" || fail "hipstack-smi version: $got"
got=$(in_root "/opt/hipstack/bin/hipstack-smi list --sysfs-root /srv/capture" 2>&1 || true)
[ "$(grep -c 'AMD Instinct MI300X' <<<"$got")" = 8 ] && pass "hipstack-smi list --sysfs-root: the capture's 8 GPUs" || fail "hipstack-smi list: $got"
got=$(in_root "/opt/hipstack/bin/hipstack-info --no-checks --sysfs-root /srv/capture" 2>&1 || true)
[ "$(grep -c 'gfx942' <<<"$got")" -ge 8 ] && pass "hipstack-info --sysfs-root: gfx942 agents" || fail "hipstack-info on the capture: $(head -20 <<<"$got")"
rc=0; got=$(in_root "/opt/hipstack/bin/hipstack-info" 2>&1) || rc=$?
[ $rc = 1 ] && grep "NOT usable" <<<"$got" >/dev/null && pass "hipstack-info without a GPU: exit 1, not usable, with advice" ||
  fail "hipstack-info without a GPU: rc=$rc $(tail -5 <<<"$got")"
got=$(in_root "/opt/hipstack/sbin/hipstack-smid --once --grpc-listen off --sysfs-root /srv/capture" 2>&1 || true)
grep "^hipstack_smid_build_info{version=\"$v\"" <<<"$got" >/dev/null && pass "hipstack-smid --once: build_info $v" || fail "hipstack-smid --once: $(tail -3 <<<"$got")"

got=$(in_root "/opt/hipstack/bin/hipstack-validate --list" 2>&1 || true)
grep -w gemm <<<"$got" >/dev/null && grep -w stream <<<"$got" >/dev/null && pass "hipstack-validate --list lists the kernels" ||
  fail "hipstack-validate --list: $(head -10 <<<"$got")"

# The wheel from the release's find-links folder, pip-installed apart from the deb's copy, loads the
# installed library and reads the capture.
rc=0; got=$(in_root "pip install -q --no-index --disable-pip-version-check --find-links /srv/hipstack-python --target /srv/wheel hipstack==$v" 2>&1) || rc=$?
[ $rc = 0 ] && pass "pip install --find-links: hipstack $v from the release" || fail "pip install the wheel (rc=$rc): $(tail -5 <<<"$got")"
cat > "$root/srv/wheel_check.py" <<'EOF'
import sys
sys.path.insert(0, "/srv/wheel")
import hipstack
print(hipstack.__file__)
with hipstack.System(sysfs_root="/srv/capture") as system:
    print(*[d.name for d in system.devices()], sep="\n")
EOF
got=$(in_root "python3 -I /srv/wheel_check.py" 2>&1 || true)
[ "$(head -1 <<<"$got")" = /srv/wheel/hipstack/__init__.py ] && [ "$(grep -c 'AMD Instinct MI300X' <<<"$got")" = 8 ] &&
  pass "the pip-installed wheel reads the capture's 8 GPUs through /opt/hipstack's library" || fail "the wheel: $(head -10 <<<"$got")"

echo "== a HIP program for gfx90a with the installed packages"
rc=0; in_root "/opt/hipstack/bin/hipcc --offload-arch=gfx90a -O2 /srv/saxpy.hip -o /srv/saxpy" > "$work/hipcc.out" 2>&1 || rc=$?
[ $rc = 0 ] && pass "/opt/hipstack/bin/hipcc --offload-arch=gfx90a" || { fail "hipcc (rc=$rc)"; cat "$work/hipcc.out"; }
got=$(in_root "/opt/hipstack/bin/roc-obj-ls /srv/saxpy" 2>&1 || true)
grep "amdgcn-amd-amdhsa--gfx90a" <<<"$got" >/dev/null && pass "the program holds gfx90a code" || fail "roc-obj-ls: $got"
got=$(in_root "ldd /srv/saxpy" 2>&1 || true)
grep -E "libamdhip64.so.5 => $prefix/lib/libamdhip64.so.5" <<<"$got" >/dev/null && pass "it loads $prefix/lib/libamdhip64.so.5" ||
  fail "ldd: $got"
rc=0; got=$(in_root "/srv/saxpy" 2>&1) || rc=$?
[ $rc = 77 ] && pass "it runs and says: $got (exit 77)" || fail "saxpy without a GPU: rc=$rc $got"
rc=0; got=$(in_root "/opt/hipstack/bin/rocminfo" 2>&1) || rc=$?
[ $rc = 1 ] && grep "ROCk module is NOT loaded, possibly no GPU devices" <<<"$got" >/dev/null &&
  pass "rocminfo from the prefix: exit 1, \"ROCk module is NOT loaded\"" || fail "rocminfo: rc=$rc $got"

echo "== a tampered repository is refused"
cp -a "$apt_repo"/. "$root/srv/tampered/"
sed -i '0,/^ [0-9a-f]\{64\} /s/^ \([0-9a-f]\)/ x\1/' "$root/srv/tampered/dists/stable/InRelease"
sed 's|file:///srv/hipstack-apt|file:///srv/tampered|' "$root/etc/apt/sources.list.d/hipstack.sources" > "$root/etc/apt/sources.list.d/tampered.sources"
rc=0; in_root "apt-get update" > "$work/tampered.out" 2>&1 || rc=$?
grep -E "The following signatures were invalid|BADSIG" "$work/tampered.out" >/dev/null && grep -E "^(E|W): .*tampered" "$work/tampered.out" >/dev/null &&
  pass "apt refuses it: $(grep -m1 -E '^(E|W): ' "$work/tampered.out")" || { fail "tampered repository (rc=$rc)"; cat "$work/tampered.out"; }
rm "$root/etc/apt/sources.list.d/tampered.sources"

echo "== purge"
in_root "dpkg-query -W -f='\${Package}\n' 'hipstack*'" > "$work/ours"
files_of_ours=$(while read -r p; do in_root "dpkg -L $p"; done < "$work/ours" | sort -u)
in_root "apt-get purge -y -q --autoremove $(tr '\n' ' ' < "$work/ours")" > "$work/purge.out" 2>&1 ||
  { fail "apt-get purge"; tail -20 "$work/purge.out"; }
left=$(in_root "dpkg-query -W -f='\${db:Status-Abbrev} \${Package}\n' 'hipstack*'" 2>/dev/null | grep -v '^un ' || true)
[ -z "$left" ] && pass "no package of ours left" || fail "left installed: $left"
# Every file (not folder: /usr and the like are shared) of our packages is gone, and nothing named
# hipstack is left anywhere; paths the dependencies apt keeps are listed, not failed (apt does not
# autoremove packages of priority important, such as netbase).
left=$(while IFS= read -r f; do
         [ -n "$f" ] && [ ! -d "$root$f" ] && { [ -e "$root$f" ] || [ -L "$root$f" ]; } && echo "$f"
       done <<<"$files_of_ours" || true)
[ -z "$left" ] && pass "no file of ours left ($(wc -l <<<"$files_of_ours") paths checked)" || fail "left after purge: $(head -5 <<<"$left")"
rm "$root/etc/apt/sources.list.d/hipstack.sources" "$root/etc/apt/keyrings/hipstack.gpg"
after=$(in_root "find / -xdev \( -path /proc -o -path /srv -o -path /tmp -o -path /var/log -o -path /var/cache -o -path /var/lib/apt -o -path /var/lib/dpkg \) -prune -o -print" | sort)
extra=$(comm -13 <(echo "$before") <(echo "$after"))
named=$(grep -e hipstack -e '^/opt/' <<<"$extra" || true)
[ -z "$named" ] && pass "no path named hipstack, nothing in /opt" || fail "left after purge: $(head -10 <<<"$named")"
[ -z "$extra" ] || echo "# also new since before the install (dependencies apt kept): $(wc -l <<<"$extra") paths, e.g. $(head -3 <<<"$extra" | tr '\n' ' ')"

echo "== rpm --root: install every rpm, erase"
rr=$work/rpmroot
mkdir -p "$rr" && tar -C "$rr" -xf "$base"
rpm --root "$rr" --initdb
mapfile -t installable < <(ls "$pkgs"/*.rpm | grep -v -e '-debuginfo-')
rc=0; rpm --root "$rr" --force-debian --nodeps -i "${installable[@]}" > "$work/rpm.out" 2>&1 || rc=$?
[ $rc = 0 ] && pass "rpm -i: ${#installable[@]} packages" || { fail "rpm -i (rc=$rc)"; tail -20 "$work/rpm.out"; }
[ -x "$rr$prefix/bin/hipcc" ] && [ -x "$rr$prefix/bin/hipstack-smi" ] && [ "$(readlink "$rr/etc/alternatives/hipstack")" = "$prefix" ] &&
  pass "rpm: the prefix is whole and /opt/hipstack points at it" || fail "rpm: $prefix incomplete or /opt/hipstack not switched"
mapfile -t installed < <(rpm --root "$rr" -qa 'hipstack*' 'python3-hipstack*')
rc=0; rpm --root "$rr" --force-debian --nodeps -e "${installed[@]}" > "$work/rpm-e.out" 2>&1 || rc=$?
left=$(cd "$rr" && find . -xdev \( -path ./opt/hipstack\* -o -path ./etc/hipstack -o -path './usr/share/doc/hipstack*' -o -name '*hipstack*.service' \) -print)
[ $rc = 0 ] && [ -z "$(rpm --root "$rr" -qa 'hipstack*' 'python3-hipstack*')" ] && [ -z "$left" ] && pass "rpm -e: nothing of ours left" ||
  fail "rpm -e (rc=$rc): left: $left $(tail -5 "$work/rpm-e.out")"

[ $failures -eq 0 ] && echo "PASS: release $v from $out"
[ $failures -eq 0 ]
