#!/bin/sh
# Run inside a container build (containers/Containerfile.*): installs hipstack packages from the
# release's signed apt repository, which containers/build.sh mounts read-only at /srv/hipstack-apt,
# then removes the repository's entry, the key and apt's lists, so the image refers to nothing that
# exists only at build time. apt checks the repository's signature (Signed-By) as users' apt does.
#   install-packages.sh PACKAGE[=VERSION]...
# APT_BUILD_OPTIONS (the build argument, in the environment of RUN): apt options for this build only,
# e.g. "-o Acquire::Check-Valid-Until=false" for an archive snapshot (containers/build.sh).
set -eu
apt_options=${APT_BUILD_OPTIONS:-}
repo=/srv/hipstack-apt
[ -f "$repo/dists/stable/InRelease" ] || { echo "install-packages.sh: no apt repository at $repo (containers/build.sh mounts it)" >&2; exit 1; }
install -d -m 0755 /etc/apt/keyrings
install -m 0644 "$repo/hipstack.gpg" /etc/apt/keyrings/hipstack-build.gpg
cat > /etc/apt/sources.list.d/hipstack-build.sources <<SOURCES
Types: deb
URIs: file://$repo
Suites: stable
Components: main
Signed-By: /etc/apt/keyrings/hipstack-build.gpg
SOURCES
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086  # the options are words
apt-get $apt_options update -q
# shellcheck disable=SC2086
apt-get $apt_options install -y -q --no-install-recommends "$@"
rm -f /etc/apt/sources.list.d/hipstack-build.sources /etc/apt/keyrings/hipstack-build.gpg
apt-get clean
rm -rf /var/lib/apt/lists/* /var/log/apt/* /var/log/dpkg.log
