#!/usr/bin/env bash
# The packages cpack makes from a HIPSTACK_PACKAGING=ON build, checked as files (nothing installed):
# names and versions, dependencies (ours by name, the system's from shlibdeps/autoreq), where files
# go, the conffile, maintainer scripts, stripped binaries with their debug packages and RUNPATHs;
# then lintian and rpmlint, which must report no errors. docs/packaging.md.
#   test_packages.sh BUILD_DIR        exit 0 pass, 1 fail, 77 skip (not a packaging build, tools missing)
set -euo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
if ! grep -q '^HIPSTACK_PACKAGING:BOOL=ON' "$build/CMakeCache.txt"; then
  echo "SKIP: $build was not configured with -DHIPSTACK_PACKAGING=ON"; exit 77
fi
for tool in cpack dpkg-deb rpm rpmbuild lintian rpmlint readelf; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
v=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
work=$(mktemp -d "${TMPDIR:-/tmp}/hipstack-packages.XXXXXX")
trap 'rm -rf "$work"' EXIT
pkgs=$("$here/make_packages.sh" "$build" "$work/out")
status=0
fail() { echo "FAIL: $*"; status=1; }

# The set of packages: versioned ones (with debug packages) and the unversioned ones.
versioned=(hipstack-smi-lib$v hipstack-smi-dev$v hipstack-smi-cli$v hipstack-monitor$v)
[ -e "$build/validation/validate" ] && versioned+=(hipstack-validation$v)
unversioned=(hipstack hipstack-smi hipstack-smi-dev hipstack-monitor python3-hipstack)
# Architecture-independent like the unversioned ones (headers, Python): _all.deb and .noarch.rpm.
unversioned+=(hipstack-hip-portability$v python3-hipstack$v)
# The opt-in drop-ins (docs/packaging.md, "Drop-ins").
unversioned+=(python3-hipstack-pynvml hipstack-nvidia-smi)
[ -e "$build/validation/validate" ] && unversioned+=(hipstack-validation)
with_binaries=(hipstack-smi-lib$v hipstack-smi-cli$v hipstack-monitor$v)
deb() { echo "$pkgs/$1_$v-1_$2.deb"; }
rpmf() { echo "$pkgs/$1-$v-1.$2.rpm"; }
for p in "${versioned[@]}"; do [ -f "$(deb "$p" amd64)" ] || fail "no $(deb "$p" amd64)"; done
for p in "${unversioned[@]}"; do [ -f "$(deb "$p" all)" ] || fail "no $(deb "$p" all)"; done
for p in "${versioned[@]}"; do [ -f "$(rpmf "$p" x86_64)" ] || fail "no $(rpmf "$p" x86_64)"; done
for p in "${unversioned[@]}"; do [ -f "$(rpmf "$p" noarch)" ] || fail "no $(rpmf "$p" noarch)"; done
for p in "${with_binaries[@]}"; do
  [ -f "$pkgs/$p-dbgsym_$v-1_amd64.ddeb" ] || fail "no debug package $p-dbgsym_$v-1_amd64.ddeb"
  [ -f "$(rpmf "$p-debuginfo" x86_64)" ] || fail "no debug package $(rpmf "$p-debuginfo" x86_64)"
done
ls "$pkgs"
[ $status -eq 0 ] || exit 1

# Dependencies: our packages by name and exact version, system libraries from shlibdeps.
field() { dpkg-deb -f "$1" "$2"; }
echo "hipstack-smi-cli$v Depends: $(field "$(deb hipstack-smi-cli$v amd64)" Depends)"
field "$(deb hipstack-smi-cli$v amd64)" Depends | grep "hipstack-smi-lib$v (= $v-1)" >/dev/null || fail "cli does not depend on its library"
field "$(deb hipstack-smi-lib$v amd64)" Depends | grep "libc6" >/dev/null || fail "library has no shlibdeps dependencies"
field "$(deb hipstack-monitor all)" Depends | grep "hipstack-monitor$v (= $v-1)" >/dev/null || fail "hipstack-monitor does not pull hipstack-monitor$v"
field "$(deb hipstack all)" Depends | grep "hipstack-smi (= $v-1)" >/dev/null || fail "hipstack does not pull hipstack-smi"
field "$(deb python3-hipstack$v all)" Depends | grep "hipstack-smi-lib$v (= $v-1), python3" >/dev/null ||
  fail "python3-hipstack$v does not depend on its library and python3: $(field "$(deb python3-hipstack$v all)" Depends)"
# The Python package: its modules (and where its library is) under the prefix; the unversioned
# package's .pth puts /opt/hipstack's on the path.
python_list=$(dpkg-deb -c "$(deb python3-hipstack$v all)" | awk '{print $6}')
for f in $(cd "$here/../../smi-lib/python/hipstack" && ls *.py) _install.py; do
  grep -qx "\./opt/hipstack-$v/lib/python3/dist-packages/hipstack/$f" <<<"$python_list" || fail "python3-hipstack$v lacks hipstack/$f"
done
[ "$(dpkg-deb --fsys-tarfile "$(deb python3-hipstack$v all)" | tar -xO "./opt/hipstack-$v/lib/python3/dist-packages/hipstack/_install.py" | grep LIBRARY_DIR)" = 'LIBRARY_DIR = "../../.."' ] ||
  fail "python3-hipstack$v: _install.py does not point at the prefix's lib/"
[ "$(dpkg-deb --fsys-tarfile "$(deb python3-hipstack all)" | tar -xO ./usr/lib/python3/dist-packages/hipstack.pth)" = /opt/hipstack/lib/python3/dist-packages ] ||
  fail "python3-hipstack: hipstack.pth does not name /opt/hipstack/lib/python3/dist-packages"

# Files: a versioned package's own files are under /opt/hipstack-X.Y.Z; only hipstack-monitor has
# files in the system's folders; every package has its copyright and Debian changelog.
for p in "${versioned[@]}"; do
  list=$(dpkg-deb -c "$(deb "$p" amd64)" | awk '{print $6}' | grep -v '/$')
  outside=$(grep -v -e "^\./opt/hipstack-$v/" -e "^\./usr/share/doc/$p/" -e "^\./usr/share/lintian/overrides/$p\$" <<<"$list" || true)
  [ -z "$outside" ] || fail "$p has files outside its prefix: $outside"
  grep -q "^\./usr/share/doc/$p/copyright$" <<<"$list" || fail "$p has no copyright file"
  grep -q "^\./usr/share/doc/$p/changelog.Debian.gz$" <<<"$list" || fail "$p has no changelog.Debian.gz"
done
monitor_list=$(dpkg-deb -c "$(deb hipstack-monitor all)" | awk '{print $6}')
for f in usr/lib/systemd/system/hipstack-smid.service usr/lib/sysusers.d/hipstack-smid.conf \
         usr/lib/tmpfiles.d/hipstack-smid.conf usr/share/dbus-1/system.d/org.hipstack.Monitor1.conf \
         etc/hipstack/hipstack-smid.conf; do
  grep -q "^\./$f$" <<<"$monitor_list" || fail "hipstack-monitor lacks /$f"
done
grep -q "^\./opt/" <<<"$monitor_list" && fail "hipstack-monitor has files under /opt"
dpkg-deb -e "$(deb hipstack-monitor all)" "$work/monitor-control"
grep -qx /etc/hipstack/hipstack-smid.conf "$work/monitor-control/conffiles" || fail "the configuration is not a conffile"
dpkg-deb --fsys-tarfile "$(deb hipstack-monitor all)" | tar -xO ./usr/lib/systemd/system/hipstack-smid.service |
  grep "^ExecStart=/opt/hipstack/sbin/hipstack-smid --config /etc/hipstack/hipstack-smid.conf$" >/dev/null ||
  fail "the unit does not start /opt/hipstack/sbin/hipstack-smid"
# Man pages and completions: the files in the versioned package of each program, links to them through
# /opt/hipstack in the unversioned package, where man, bash-completion, zsh and fish look.
docs_check() {  # PROGRAM SECTION VERSIONED-PACKAGE UNVERSIONED-PACKAGE ARCH
  local own links
  own=$(dpkg-deb -c "$(deb "$3" amd64)" | awk '{print $6}')
  links=$(dpkg-deb -c "$(deb "$4" "$5")" | awk '{print $6, $7, $8}')
  for f in "share/man/man$2/$1.$2.gz" "share/bash-completion/completions/$1" "share/zsh/vendor-completions/_$1" \
           "share/fish/vendor_completions.d/$1.fish"; do
    grep -qx "\./opt/hipstack-$v/$f" <<<"$own" || fail "$3 lacks /opt/hipstack-$v/$f"
    grep -qx "\./usr/$f -> /opt/hipstack/$f" <<<"$links" || fail "$4 has no link /usr/$f -> /opt/hipstack/$f"
  done
}
docs_check hipstack-smi 1 hipstack-smi-cli$v hipstack-smi all
docs_check hipstack-info 1 hipstack-smi-cli$v hipstack-smi all
docs_check hipstack-smid 8 hipstack-monitor$v hipstack-monitor all
[ -e "$build/validation/validate" ] && docs_check hipstack-validate 1 hipstack-validation$v hipstack-validation all
# The drop-ins take the place of NVIDIA's packages, and nothing of ours pulls them in.
[ "$(field "$(deb python3-hipstack-pynvml all)" Conflicts)" = python3-pynvml ] || fail "python3-hipstack-pynvml does not conflict with python3-pynvml"
[ "$(field "$(deb python3-hipstack-pynvml all)" Provides)" = python3-pynvml ] || fail "python3-hipstack-pynvml does not provide python3-pynvml"
[ "$(field "$(deb hipstack-nvidia-smi all)" Conflicts)" = nvidia-smi ] || fail "hipstack-nvidia-smi does not conflict with nvidia-smi"
for p in "$pkgs"/*.deb; do
  if field "$p" Depends | grep -E '(^|, )(python3-hipstack-pynvml|hipstack-nvidia-smi)( |,|$)' >/dev/null; then
    fail "$(basename "$p") pulls in an opt-in drop-in: $(field "$p" Depends)"
  fi
done
dpkg-deb --fsys-tarfile "$(deb python3-hipstack-pynvml all)" | tar -xO ./usr/lib/python3/dist-packages/pynvml.py |
  grep -qx "import hipstack.pynvml as _module" || fail "python3-hipstack-pynvml: pynvml.py does not import hipstack.pynvml"
dpkg-deb -e "$(deb hipstack-nvidia-smi all)" "$work/nvidia-smi-control"
grep -q "update-alternatives --install /usr/bin/nvidia-smi nvidia-smi /opt/hipstack/bin/hipstack-smi " "$work/nvidia-smi-control/postinst" ||
  fail "hipstack-nvidia-smi's postinst does not make /usr/bin/nvidia-smi an alternative for /opt/hipstack/bin/hipstack-smi"
grep -q "update-alternatives --remove nvidia-smi /opt/hipstack/bin/hipstack-smi" "$work/nvidia-smi-control/prerm" ||
  fail "hipstack-nvidia-smi's prerm does not remove its alternative"
rpm -qp --conflicts "$(rpmf hipstack-nvidia-smi noarch)" 2>/dev/null | grep -qx nvidia-smi || fail "rpm hipstack-nvidia-smi: no conflict with nvidia-smi"
rpm -qp --provides "$(rpmf python3-hipstack-pynvml noarch)" 2>/dev/null | grep -qx python3-pynvml || fail "rpm python3-hipstack-pynvml: does not provide python3-pynvml"
dpkg-deb -e "$(deb hipstack-smi-lib$v amd64)" "$work/lib-control"
grep -q "update-alternatives --install /opt/hipstack hipstack /opt/hipstack-$v " "$work/lib-control/postinst" ||
  fail "the library's postinst does not register /opt/hipstack"

# Binaries: stripped, RUNPATH relative to themselves, their debug information in the -dbgsym package.
dpkg-deb -x "$(deb hipstack-smi-cli$v amd64)" "$work/cli"
dpkg-deb -x "$pkgs/hipstack-smi-cli$v-dbgsym_$v-1_amd64.ddeb" "$work/cli-dbg"
smi=$work/cli/opt/hipstack-$v/bin/hipstack-smi
file "$smi" | grep ", stripped" >/dev/null || fail "hipstack-smi is not stripped: $(file "$smi")"
# hipstack-smi and hipstack-info carry the library in them (smi-cli/CMakeLists.txt): glibc's libraries
# alone, no search path; hipstack-smi-remote loads the packaged library through its RUNPATH.
for program in bin/hipstack-smi bin/hipstack-info; do
  needed=$(readelf -d "$work/cli/opt/hipstack-$v/$program" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
  [ "$needed" = "ld-linux-x86-64.so.2 libc.so.6 libm.so.6 " ] || fail "$program loads more than glibc: $needed"
  ! readelf -d "$work/cli/opt/hipstack-$v/$program" | grep -q 'R.*PATH' || fail "$program has a search path"
done
remote=$work/cli/opt/hipstack-$v/libexec/hipstack/hipstack-smi-remote
readelf -d "$remote" | grep 'RUNPATH.*\[\$ORIGIN/\.\./\.\./lib\]' >/dev/null ||
  fail "hipstack-smi-remote RUNPATH: $(readelf -d "$remote" | grep PATH)"
bad=$(dpkg-deb -I "$pkgs/hipstack-smi-cli$v-dbgsym_$v-1_amd64.ddeb" md5sums | grep -v '^[0-9a-f]\{32\}  usr/lib/debug/' || true)
[ -z "$bad" ] || fail "the -dbgsym package's md5sums lists paths outside the package: $bad"
id=$(readelf -n "$smi" | sed -n 's/.*Build ID: //p')
[ -f "$work/cli-dbg/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] || fail "no debug file for hipstack-smi (build ID $id)"

# rpm: names, our Requires, autoreq/autoprov, the conffile, scriptlets, stripped binaries.
rpm -qp --requires "$(rpmf hipstack-smi-cli$v x86_64)" > "$work/cli.requires" 2>/dev/null
grep -q "^hipstack-smi-lib$v = $v-1$" "$work/cli.requires" || fail "cli rpm does not require its library"
grep -q "^libhipstack-smi.so.0()(64bit)$" "$work/cli.requires" || fail "cli rpm: no autoreq on libhipstack-smi.so.0"
rpm -qp --provides "$(rpmf hipstack-smi-lib$v x86_64)" 2>/dev/null | grep "^libhipstack-smi.so.0()(64bit)$" >/dev/null ||
  fail "library rpm does not provide libhipstack-smi.so.0"
[ "$(rpm -qp --configfiles "$(rpmf hipstack-monitor noarch)" 2>/dev/null)" = /etc/hipstack/hipstack-smid.conf ] ||
  fail "rpm hipstack-monitor: /etc/hipstack/hipstack-smid.conf is not its only config file"
rpm -qp --scripts "$(rpmf hipstack-smi-lib$v x86_64)" 2>/dev/null |
  grep "update-alternatives --install /opt/hipstack hipstack /opt/hipstack-$v " >/dev/null || fail "library rpm: no alternatives scriptlet"
mkdir -p "$work/rpm-cli" && (cd "$work/rpm-cli" && rpm2cpio "$(rpmf hipstack-smi-cli$v x86_64)" | cpio -idm --quiet)
file "$work/rpm-cli/opt/hipstack-$v/bin/hipstack-smi" | grep ", stripped" >/dev/null || fail "rpm: hipstack-smi is not stripped"

# lintian and rpmlint: no errors (their warnings are listed and justified in docs/packaging.md).
# Side by side: each reads only the packages (docs/testing.md, "Margins").
lintian --tag-display-limit 0 "$pkgs"/*.deb > "$work/lintian.out" 2>&1 &
lintian_pid=$!
rpmlint -r "$here/../../superbuild/packaging/rpmlintrc" "$pkgs"/*.rpm > "$work/rpmlint.out" 2>&1 || true
wait "$lintian_pid" || true
cat "$work/lintian.out"
grep -q '^E: ' "$work/lintian.out" && fail "lintian reports errors"
grep -v -e '^$' -e '^ ' "$work/rpmlint.out"
summary=$(grep -E '[0-9]+ errors, [0-9]+ warnings' "$work/rpmlint.out" || true)
[ -n "$summary" ] || fail "rpmlint printed no summary"
echo "rpmlint:$summary"
grep -qE ' 0 errors, ' <<<"$summary" || fail "rpmlint reports errors"

[ $status -eq 0 ] && echo "packages test passed ($v)"
exit $status
