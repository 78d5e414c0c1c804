#!/usr/bin/env bash
# What users do with the packages, in a Debian 12 chroot (debootstrap minbase, cached under the build
# folder: scripts/lib/debian_chroot.sh): apt-get install hipstack from a local file repository, run
# hipstack-smi from /opt/hipstack,
# upgrade to the next release (its versioned packages install beside the first's), switch /opt/hipstack
# between the two, purge, and find nothing of ours left. Then the rpms: install, co-install and erase
# in an rpm --root. docs/install.md.
#   test_install_chroot.sh BUILD_DIR NEXT_PACKAGES_DIR CAPTURE_SYS_DIR
#     BUILD_DIR           a HIPSTACK_PACKAGING=ON build (release N, packaged here)
#     NEXT_PACKAGES_DIR   the packages of release N+1 (build_release.sh)
# Exit 0 pass, 1 fail, 77 skip (not root, no debootstrap/rpm, no N+1 packages).
set -euo pipefail
build=$(cd "${1:?usage}" && pwd) next=${2:?usage} capture=${3:?usage}
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (chroot, mounts)"; exit 77; }
for tool in debootstrap rpm cpack dpkg-scanpackages; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
ls "$next"/*.deb >/dev/null 2>&1 || { echo "SKIP: no release N+1 packages in $next"; exit 77; }
v1=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
v2=$(basename "$(ls "$next"/hipstack-smi-lib*_amd64.deb)" | sed -n 's/^hipstack-smi-lib\([0-9.]*\)_.*/\1/p')
echo "releases: $v1 and $v2"

# shellcheck source=../../scripts/lib/debian_chroot.sh
source "$here/../../scripts/lib/debian_chroot.sh"
base=$(debian_chroot_base "$build/cache") || exit 1

work=$(mktemp -d "${TMPDIR:-/tmp}/hipstack-chroot.XXXXXX")
root=$work/root
cleanup() {
  debian_chroot_umount "$root"
  debian_chroot_umount "$work/rpmroot"
  rm -rf "$work"
}
trap cleanup EXIT
debian_chroot_unpack "$base" "$root" debian
pkgs1=$("$here/make_packages.sh" "$build" "$work/release1")
mkdir -p "$root/srv/repo" "$root/srv/capture"
cp -r "$capture"/. "$root/srv/capture/"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive sh -c "$1"; }
# A local file repository ([trusted=yes]; the signed one is tested by tests/superbuild/test_release.sh).
publish() {
  cp "$@" "$root/srv/repo/"
  (cd "$root/srv/repo" && dpkg-scanpackages --multiversion . /dev/null 2>/dev/null > Packages)
  in_root "apt-get update -qq"
}
echo "deb [trusted=yes] file:/srv/repo ./" > "$root/etc/apt/sources.list.d/hipstack.list"
status=0
fail() { echo "FAIL: $*"; status=1; }
check() { local want=$1; shift; local got; got=$(in_root "$*" 2>&1) || true
          [ "$got" = "$want" ] || fail "'$*' gave '$got', expected '$want'"; }

echo "== apt-get install hipstack hipstack-smi-dev ($v1)"
publish "$pkgs1"/*.deb
in_root "apt-get install -y -qq hipstack hipstack-smi-dev >/tmp/apt.log 2>&1" || { in_root "tail -30 /tmp/apt.log"; exit 1; }
check "/opt/hipstack-$v1" "readlink /etc/alternatives/hipstack"
check "/etc/alternatives/hipstack" "readlink /opt/hipstack"
in_root "/opt/hipstack/bin/hipstack-smi version" | tee "$work/version.out"
grep -q "$v1" "$work/version.out" || fail "hipstack-smi version does not say $v1"
in_root "/opt/hipstack/bin/hipstack-smi list --sysfs-root /srv/capture" | tee "$work/list.out"
# The Python package, through python3-hipstack's .pth and the library of its own prefix.
check "$v1 8" "HIPSTACK_SYSFS_ROOT=/srv/capture python3 -c 'import hipstack; print(hipstack.version(), len(hipstack.System().devices()))'"
grep -q "AMD Instinct MI300X" "$work/list.out" || fail "hipstack-smi list did not show the capture's GPUs"
in_root "/opt/hipstack/sbin/hipstack-smid --once --grpc-listen off --sysfs-root /srv/capture" >"$work/smid.out" 2>&1 ||
  fail "hipstack-smid --once failed: $(tail -3 "$work/smid.out")"
grep -q "^hipstack_smid_build_info{version=\"$v1\"" "$work/smid.out" || fail "hipstack-smid does not report version $v1"
check "hipstack" "id -un hipstack"
in_root "getent group hipstack-admin >/dev/null" || fail "no hipstack-admin group"
check "$v1" "sed -n 's/^Version: //p' /opt/hipstack/lib/pkgconfig/hipstack-smi.pc"
# The opt-in drop-ins: nvidia-smi and `import pynvml` answered by hipstack (docs/packaging.md, "Drop-ins").
in_root "apt-get install -y -qq python3-hipstack-pynvml hipstack-nvidia-smi >/tmp/apt.log 2>&1" || { in_root "tail -30 /tmp/apt.log"; exit 1; }
check "/opt/hipstack/bin/hipstack-smi" "readlink /etc/alternatives/nvidia-smi"
check "8" "nvidia-smi -L --sysfs-root /srv/capture | grep -c '^GPU [0-9]*: AMD Instinct MI300X (UUID: '"
check "hipstack.pynvml 8" "HIPSTACK_SYSFS_ROOT=/srv/capture python3 -c 'import pynvml; pynvml.nvmlInit(); print(pynvml.__name__, pynvml.nvmlDeviceGetCount())'"
# An edited conffile survives the upgrade below.
in_root "echo '# edited by the test' >> /etc/hipstack/hipstack-smid.conf"

echo "== upgrade to $v2: its versioned packages install beside $v1's"
publish "$next"/*.deb
in_root "apt-get install -y -qq hipstack hipstack-smi-dev >/tmp/apt.log 2>&1" || { in_root "tail -30 /tmp/apt.log"; exit 1; }
for p in hipstack-smi-lib hipstack-smi-cli hipstack-monitor hipstack-smi-dev; do
  for ver in "$v1" "$v2"; do
    check "install ok installed" "dpkg-query -W -f='\${Status}' $p$ver"
  done
done
check "$v2-1" "dpkg-query -W -f='\${Version}' hipstack"
check "/opt/hipstack-$v2" "readlink /etc/alternatives/hipstack"
in_root "/opt/hipstack/bin/hipstack-smi version" | grep "$v2" >/dev/null || fail "after the upgrade, /opt/hipstack runs $v2"
in_root "/opt/hipstack-$v1/bin/hipstack-smi version" | grep "$v1" >/dev/null || fail "$v1 stopped working beside $v2"
check "$v2" "python3 -c 'import hipstack; print(hipstack.version())'"
in_root "grep -q '# edited by the test' /etc/hipstack/hipstack-smid.conf" || fail "the upgrade lost the edited configuration"

echo "== switch /opt/hipstack"
in_root "update-alternatives --set hipstack /opt/hipstack-$v1 >/dev/null"
in_root "/opt/hipstack/bin/hipstack-smi version" | grep "$v1" >/dev/null || fail "update-alternatives --set did not switch to $v1"
in_root "update-alternatives --auto hipstack >/dev/null"
check "/opt/hipstack-$v2" "readlink /etc/alternatives/hipstack"
# Removing the release /opt/hipstack points at moves it to the other one.
in_root "apt-get purge -y -qq hipstack hipstack-smi hipstack-smi-dev hipstack-smi-dev$v2 hipstack-smi-cli$v2 hipstack-monitor hipstack-monitor$v2 hipstack-smi-lib$v2 >/tmp/apt.log 2>&1" ||
  { in_root "tail -30 /tmp/apt.log"; exit 1; }
check "/opt/hipstack-$v1" "readlink /etc/alternatives/hipstack"

echo "== purge everything"
in_root "apt-get purge -y -qq 'hipstack*' 'python3-hipstack*' >/tmp/apt.log 2>&1" || { in_root "tail -30 /tmp/apt.log"; exit 1; }
check "" "dpkg-query -W -f='\${db:Status-Abbrev} \${Package}\n' 'hipstack*' 'python3-hipstack*' 2>/dev/null | grep -v '^un ' || true"
left=$(in_root "find / -xdev \( -path /srv -o -path /proc \) -prune -o \( -name '*hipstack*' -print \) | grep -v -e '^/var/lib/apt/lists/' -e '^/var/cache/apt/' -e '^/etc/apt/sources.list.d/hipstack.list$'" || true)
[ -z "$left" ] || fail "left after purge: $left"
for f in /usr/bin/nvidia-smi /etc/alternatives/nvidia-smi /usr/lib/python3/dist-packages/pynvml.py; do
  in_root "[ ! -e $f ] && [ ! -L $f ]" || fail "left after purge: $f"
done
in_root "! ls /usr/lib/python3/dist-packages/__pycache__/pynvml.* >/dev/null 2>&1" || fail "left after purge: pynvml.py's bytecode"

echo "== rpm: install $v1, co-install $v2, erase (rpm --root, --nodeps: no rpm-based system here)"
debian_chroot_umount "$root"
rr=$work/rpmroot
mkdir "$rr" && tar -C "$rr" -xf "$base"
rpmi() { rpm --root "$rr" --force-debian --nodeps "$@"; }
rpm --root "$rr" --initdb
mapfile -t r1 < <(ls "$pkgs1"/*.rpm | grep -v -e '-debuginfo-')
mapfile -t r2 < <(ls "$next"/*.rpm | grep -v -e '-debuginfo-')
rpmi -i "${r1[@]}"
[ "$(readlink "$rr/etc/alternatives/hipstack")" = "/opt/hipstack-$v1" ] || fail "rpm: /opt/hipstack does not point at $v1"
[ -x "$rr/opt/hipstack-$v1/bin/hipstack-smi" ] || fail "rpm: no /opt/hipstack-$v1/bin/hipstack-smi"
[ -f "$rr/etc/hipstack/hipstack-smid.conf" ] || fail "rpm: no /etc/hipstack/hipstack-smid.conf"
grep -q '^hipstack:' "$rr/etc/passwd" || fail "rpm: the scriptlet made no hipstack user"
rpmi -U "${r2[@]}"  # the unversioned packages upgrade; the versioned ones of $v2 are new
[ -d "$rr/opt/hipstack-$v1" ] && [ -d "$rr/opt/hipstack-$v2" ] || fail "rpm: the two releases do not co-install"
[ "$(readlink "$rr/etc/alternatives/hipstack")" = "/opt/hipstack-$v2" ] || fail "rpm: /opt/hipstack does not point at $v2"
# Root's import writes bytecode beside the package (as on a real system): erase must take it too.
mkdir -p "$rr/opt/hipstack-$v1/lib/python3/dist-packages/hipstack/__pycache__"
touch "$rr/opt/hipstack-$v1/lib/python3/dist-packages/hipstack/__pycache__/_capi.cpython-311.pyc"
[ "$(readlink "$rr/etc/alternatives/nvidia-smi")" = /opt/hipstack/bin/hipstack-smi ] || fail "rpm: /usr/bin/nvidia-smi is not hipstack-smi's alternative"
mkdir -p "$rr/usr/lib/python3/dist-packages/__pycache__"
touch "$rr/usr/lib/python3/dist-packages/__pycache__/pynvml.cpython-311.pyc"
mapfile -t installed < <(rpm --root "$rr" -qa 'hipstack*' 'python3-hipstack*')
rpmi -e "${installed[@]}"
[ -z "$(rpm --root "$rr" -qa 'hipstack*' 'python3-hipstack*')" ] || fail "rpm: packages left installed"
left=$(cd "$rr" && find . -xdev -name '*hipstack*' | grep -v -e '^\./var/lib/rpm' || true)
[ -z "$left" ] || fail "rpm: left after erase: $left"
for f in usr/bin/nvidia-smi etc/alternatives/nvidia-smi usr/lib/python3/dist-packages/pynvml.py \
         usr/lib/python3/dist-packages/__pycache__/pynvml.cpython-311.pyc; do
  [ ! -e "$rr/$f" ] && [ ! -L "$rr/$f" ] || fail "rpm: left after erase: /$f"
done

[ $status -eq 0 ] && echo "install test passed ($v1, $v2; deb in a chroot, rpm in an rpm --root)"
exit $status
