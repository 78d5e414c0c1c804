#!/usr/bin/env bash
# Makes the deb and rpm packages of a HIPSTACK_PACKAGING=ON build into OUT/packages (cpack), leaving
# the build folder as it is. Prints the packages' folder.
#   make_packages.sh BUILD_DIR OUT
# The two generators run side by side, each in a folder of its own (its own staging tree): the rpm
# run (40 s on two cores) then costs nothing beside the deb run, nearly all of it xz compressing the
# debug packages (docs/testing.md, "Margins"). xz keeps one thread: its output depends on the count.
set -euo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR OUT}" && pwd)
out=${2:?usage: $0 BUILD_DIR OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
pids=()
for generator in DEB RPM; do
  mkdir -p "$out/$generator"
  # CPACK_OUTPUT_FILE_PREFIX (packages) is relative to the folder cpack runs in.
  (cd "$out/$generator" && exec cpack -G "$generator" --config "$build/CPackConfig.cmake" -B "$out/$generator") \
    >"$out/cpack-$generator.log" 2>&1 &
  pids+=($!)
done
status=0
for i in 0 1; do
  generator=$([ $i -eq 0 ] && echo DEB || echo RPM)
  if ! wait "${pids[i]}"; then
    echo "cpack -G $generator failed:" >&2
    cat "$out/cpack-$generator.log" >&2
    status=1
  fi
done
[ $status -eq 0 ] || exit 1
mkdir -p "$out/packages"
for generator in DEB RPM; do
  find "$out/$generator/packages" -maxdepth 1 -type f -exec mv -t "$out/packages" {} +
  rm -rf "$out/$generator"
done
echo "$out/packages"
