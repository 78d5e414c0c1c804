#!/usr/bin/env bash
# Makes the deb and rpm packages of a HIPSTACK_PACKAGING=ON build into OUT/packages (cpack), leaving
# the build folder as it is. Prints the packages' folder.
#   make_packages.sh BUILD_DIR OUT
set -euo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR OUT}" && pwd)
out=${2:?usage: $0 BUILD_DIR OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
# CPACK_OUTPUT_FILE_PREFIX (packages) is relative to the folder cpack runs in.
(cd "$out" && cpack --config "$build/CPackConfig.cmake" -B "$out") >"$out/cpack.log" 2>&1 || { cat "$out/cpack.log" >&2; exit 1; }
rm -rf "$out/_CPack_Packages"
echo "$out/packages"
