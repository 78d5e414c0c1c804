#!/usr/bin/env bash
# Configures and builds SOURCE_DIR from scratch in BUILD_DIR as version VERSION (HIPSTACK_VERSION_OVERRIDE)
# for packages (HIPSTACK_PACKAGING=ON; no tests or benchmarks), then makes its packages in
# BUILD_DIR/out/packages. The other release of the install and reproducibility tests.
#   build_release.sh SOURCE_DIR BUILD_DIR VERSION [cmake arguments...]
set -euo pipefail
src=${1:?usage: $0 SOURCE_DIR BUILD_DIR VERSION [cmake arguments]}
build=${2:?usage} version=${3:?usage}
shift 3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$build"
mkdir -p "$(dirname "$build")"  # its logs go beside it
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHIPSTACK_PACKAGING=ON \
      -DHIPSTACK_VERSION_OVERRIDE="$version" -DHIPSTACK_BUILD_TESTS=OFF -DHIPSTACK_BUILD_BENCH=OFF "$@" >"$build.configure.log" 2>&1 \
  || { cat "$build.configure.log" >&2; exit 1; }
cmake --build "$build" -j "$(nproc)" >"$build.build.log" 2>&1 || { tail -50 "$build.build.log" >&2; exit 1; }
"$here/make_packages.sh" "$build" "$build/out"
