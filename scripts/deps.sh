#!/usr/bin/env bash
# Installs the Debian packages hipstack builds and tests with (only the missing ones): Debian 12's, or
# in a release track's build root that distribution's (the build and superbuild sets only).
# Usage: scripts/deps.sh [build|test|superbuild|containers] [TRACK]
# TRACK (superbuild): the release track whose system components to install (default: the manifest's
# default, debian12); superbuild/build.sh runs `deps.sh superbuild TRACK` inside a track's build root.
# On a machine of another distribution than the track's, only the tools that make that root install.
set -euo pipefail
track=${2:-}
build_packages=(build-essential python3 cmake ninja-build pkg-config libdrm-dev libfmt-dev libcli11-dev nlohmann-json3-dev libsystemd-dev
                libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc libsqlite3-dev)
test_packages=(libgtest-dev libgmock-dev python3 clang-14 libclang-rt-14-dev llvm-14 rocm-smi librocm-smi64-1 util-linux prometheus systemd
               python3-grpcio python3-grpc-tools python3-protobuf python3-h2 python3-yaml python3-matplotlib dbus dbus-daemon openssl
               fuse3 libfuse3-dev universal-ctags
               lintian rpmlint rpm debootstrap)
# (tests/deps/tools.txt lists every tool the tests call.) llvm-14: llvm-symbolizer for clang's sanitizer
# reports (scripts/test.sh steps 2 and 3); clang-14 only recommends it, and without it a report has no
# function names, so the LeakSanitizer suppressions (scripts/lsan.supp) cannot match.
# smi-lib.abi: abidw and abidiff check the library's ABI against its recorded one (smi-lib/abi/).
test_packages+=(abigail-tools xz-utils)
# python.wheel installs the hipstack wheel with pip, as a pip user would.
test_packages+=(python3-pip)
# deps.readme-fresh-debian12 and superbuild.fresh-debian12 clone with git (and the packages' dates need it).
test_packages+=(git)
# cli.monitor runs the human views in tmux at 80x30 (no line may wrap).
test_packages+=(tmux)
# cli.docs renders the man pages (man-db) and drives the generated completions in bash, zsh and fish.
test_packages+=(man-db zsh fish)
# installer.repos checks hipstack-install's dnf path with dnf --installroot (tests/installer/test_repos.sh).
test_packages+=(dnf)
# python.pynvml-clients runs Debian's gpustat and nvitop (unpacked, not installed): what they depend on.
test_packages+=(python3-psutil python3-blessed)
# validation/ for AMD GPUs: Debian's HIP 5.2.3. hipcc is a driver script over clang-15; its Depends bring
# clang-15, lld-15, llvm-15 and clang-tools-15 (the AMDGPU back end and linker), rocm-device-libs (the
# device bitcode libraries), rocminfo and libamdhip64-dev (headers, libamdhip64, comgr, the HSA runtime).
test_packages+=(hipcc libamdhip64-dev)
# deploy.kubernetes (tests/deploy/test_kubernetes.py) renders the Helm chart and validates every
# Kubernetes manifest offline; helm and kubeconform are not in Debian 12. Go and sprig (with
# sigs.k8s.io/yaml) are helm's template engine, built here into a small renderer; python3-kubernetes's
# model classes are the Kubernetes API's field and type schema; python3-jsonschema checks
# values.schema.json and the ServiceMonitor; yamllint checks the YAML. kubectl (kustomize) is used
# where present, but is not a Debian package.
test_packages+=(golang-go golang-github-masterminds-sprig-dev golang-k8s-sigs-yaml-dev python3-kubernetes
                python3-jsonschema python3-yaml yamllint)
# The superbuild (superbuild/build.sh, docs/superbuild.md): patchelf sets the RUNPATHs of the relocated
# AMD .debs; the manifest's system components (clang/lld 15, perl modules, the libraries the AMD
# runtime links to) are read from superbuild/components.json once cmake is installed.
# package.sh's repositories: createrepo-c and gnupg (installer/, docs/install-repos.md).
# The packages' dates are the last commit's time (SOURCE_DATE_EPOCH, superbuild/cmake/
# HipstackPackagingFiles.cmake), which git reads (superbuild.fresh-debian12 found it missing).
# rpmbuild's find-debuginfo strips the rpm packages' binaries with eu-strip (packaging.packages);
# Debian's rpm does not depend on elfutils.
# CPack's dpkg-shlibdeps step runs `file` on every binary: Debian 12's set happened to bring it, a fresh
# sid root did not (superbuild.current-fresh-debian12's first run: "CPackDeb: file utility is not available").
superbuild_packages=(patchelf python3 rpm createrepo-c gnupg gpgv git elfutils debootstrap file)
# containers/build.sh and containers.images: podman builds with chroot isolation and runs with runc;
# debootstrap makes the base image.
container_packages=(podman runc debootstrap uidmap)
packages=("${build_packages[@]}")
[ "${1:-build}" = test ] && packages+=("${test_packages[@]}")
# The tests include the superbuild's (label superbuild): they need what it needs.
[ "${1:-build}" = test ] && packages+=("${superbuild_packages[@]}" "${container_packages[@]}")
[ "${1:-build}" = containers ] && packages+=("${superbuild_packages[@]}" "${container_packages[@]}")
[ "${1:-build}" = superbuild ] && packages+=("${superbuild_packages[@]}")
install_missing() {
  local missing=() p sudo=""
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "Installing: ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
install_missing "${packages[@]}"
if [ "${1:-build}" = superbuild ] || [ "${1:-build}" = test ] || [ "${1:-build}" = containers ]; then
  root=$(dirname "$(realpath "$0")")/..
  # A track of another distribution than this machine's (current: Debian sid) builds in its own root
  # (superbuild/build.sh runs this script there): its system packages are that root's, not this
  # machine's, which only needs the tools above (debootstrap, python3) to make and enter the root.
  if [ -n "$track" ] && [ "${HIPSTACK_BUILD_ROOT_TRACK:-}" != "$track" ]; then
    track_suite=$(python3 "$root/superbuild/scripts/tracks.py" "$root/superbuild/components.json" field "$track" suite)
    host_suite=$( . /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}" )
    if [ "$track_suite" != "$host_suite" ]; then
      echo "deps.sh: track '$track' builds in its own Debian $track_suite root: superbuild/build.sh --track $track installs its system packages there" >&2
      exit 0
    fi
  fi
  mapfile -t system_packages < <(cmake -DMANIFEST="$root/superbuild/components.json" -DTRACK="$track" \
                                       -P "$root/superbuild/cmake/system_packages.cmake")
  install_missing "${system_packages[@]}"
fi
