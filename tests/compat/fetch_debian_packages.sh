#!/bin/sh
# Fetches Debian packages of another suite with an apt configuration of its own (never the host's
# sources) and unpacks them, without installing, into CACHE/root; prints that folder. Used to run
# Debian's own clients (gpustat, nvitop: sid contrib) unchanged against hipstack's layers.
# Usage: fetch_debian_packages.sh CACHE SUITE COMPONENT PACKAGE[=VERSION]...
set -eu
cache=$1 suite=$2 component=$3
shift 3
mkdir -p "$cache/apt/lists/partial" "$cache/apt/archives/partial" "$cache/debs"
cache=$(cd "$cache" && pwd)
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite $component" \
  >"$cache/apt/sources.list"
: >"$cache/apt/status"
set -- "$@"
apt() {
  apt-get -q -o Dir::Etc::sourcelist="$cache/apt/sources.list" -o Dir::Etc::sourceparts=- \
    -o Dir::State::Lists="$cache/apt/lists" -o Dir::State::status="$cache/apt/status" \
    -o Dir::Cache="$cache/apt" -o Dir::Cache::archives="$cache/apt/archives" -o APT::Sandbox::User=root "$@"
}
apt update >"$cache/apt/update.log" 2>&1 || { cat "$cache/apt/update.log" >&2; exit 1; }
(cd "$cache/debs" && apt download "$@" >"$cache/apt/download.log" 2>&1) || { cat "$cache/apt/download.log" >&2; exit 1; }
rm -rf "$cache/root"
for deb in "$cache"/debs/*.deb; do dpkg-deb -x "$deb" "$cache/root"; done
echo "$cache/root"
