#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds programs against it the ways users do:
# CMake find_package (C++ and C) and pkg-config (C); then checks the installed CLI and SONAME.
#   test_install.sh BUILD_DIR CAPTURE_SYS_DIR
set -euo pipefail
build=$1 capture=$2
here=$(cd "$(dirname "$0")" && pwd)
prefix=$(mktemp -d /tmp/hipstack-install.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
# The components this test uses (library, development files, CLI): a HIPSTACK_PACKAGING=ON build
# installs the daemon's system files at absolute system paths.
for component in smi_lib devel runtime; do
  cmake --install "$build" --prefix "$prefix" --component "$component" >/dev/null
done
libdir=$(ls -d "$prefix"/lib*/ | head -1)
expected="0000:05:00.0 35"
cmake -S "$here/consumer" -B "$prefix/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer" >/dev/null
for program in consumer_cxx consumer_c; do
  out=$(LD_LIBRARY_PATH="$libdir" "$prefix/consumer/$program" "$capture" | sed -n 1p)
  [ "$out" = "$expected" ] || { echo "$program printed '$out', expected '$expected'" >&2; exit 1; }
done
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046
cc -std=c99 -Wall -Werror "$here/consumer/main.c" -o "$prefix/pkgconfig_c" $(pkg-config --cflags --libs hipstack-smi)
out=$(LD_LIBRARY_PATH="$libdir" "$prefix/pkgconfig_c" "$capture" | sed -n 1p)
[ "$out" = "$expected" ] || { echo "pkg-config build printed '$out'" >&2; exit 1; }
# A C program reaching the whole model (tour.c), built strictly both ways, says what the installed CLI
# says about the same capture.
proc_root=$(dirname "$capture")/proc
# shellcheck disable=SC2046
cc -std=c99 -Wall -Wextra -pedantic -Werror "$here/consumer/tour.c" -o "$prefix/pkgconfig_tour" $(pkg-config --cflags --libs hipstack-smi)
python3 "$here/tour_expected.py" "$prefix/bin/hipstack-smi" "$capture" "$proc_root" > "$prefix/tour.expected"
for program in "$prefix/consumer/consumer_tour" "$prefix/pkgconfig_tour"; do
  LD_LIBRARY_PATH="$libdir" "$program" "$capture" "$proc_root" > "$prefix/tour.out"
  diff -u "$prefix/tour.expected" "$prefix/tour.out" >&2 || { echo "$program disagrees with hipstack-smi (diff above)" >&2; exit 1; }
done
grep -q "^links [1-9]" "$prefix/tour.out" && grep -q "pids [0-9]" "$prefix/tour.out" ||
  { echo "the capture gave the tour no links or no processes: the comparison proved nothing" >&2; exit 1; }
# The installed CLI finds its library through its RUNPATH, and the library carries a SONAME.
"$prefix/bin/hipstack-smi" list --sysfs-root "$capture" | grep "AMD Instinct MI300X" >/dev/null
"$prefix/bin/hipstack-info" --no-checks --sysfs-root "$capture" | grep "AMD Instinct MI300X" >/dev/null
objdump -p "$libdir/libhipstack-smi.so" | grep "SONAME *libhipstack-smi.so.0" >/dev/null
# Only the public API is exported: no internal (detail) symbols.
if nm -D --defined-only "$libdir/libhipstack-smi.so" | c++filt | grep "hipstack::smi::detail" >/dev/null; then
  echo "internal symbols are exported" >&2
  exit 1
fi
echo "install test passed"
