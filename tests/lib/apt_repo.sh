# Adds a hipstack apt repository to a Debian root as users do (sourced, not run): its key in
# /etc/apt/keyrings, a deb822 .sources file signed by it (docs/install-repos.md).
#   hipstack_apt_source ROOT KEYRING URI
#       KEYRING: the repository's published key (repo/apt/hipstack.gpg); URI: as the root's apt sees
#       it (file:///srv/hipstack-apt).
hipstack_apt_source() {
  local root=$1 keyring=$2 uri=$3
  mkdir -p "$root/etc/apt/keyrings" || return 1
  cp "$keyring" "$root/etc/apt/keyrings/hipstack.gpg" || return 1
  cat > "$root/etc/apt/sources.list.d/hipstack.sources" <<EOT
Types: deb
URIs: $uri
Suites: stable
Components: main
Signed-By: /etc/apt/keyrings/hipstack.gpg
EOT
}
