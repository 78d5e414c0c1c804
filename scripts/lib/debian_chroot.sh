# Debian 12 chroots and container bases, for the tests that install packages as users do and for
# containers/build.sh (sourced, not run).
#
#   debian_chroot_base CACHE_DIR [SUITE]
#       Prints the path of a Debian minbase tarball of SUITE (default bookworm, Debian 12), made once
#       with debootstrap (about 30 s; needs deb.debian.org) and reused by every test and rerun.
#       Concurrent callers wait on a lock. Returns 1, with debootstrap's last lines on stderr, when
#       debootstrap fails.
#   debian_chroot_unpack BASE ROOT hermetic|debian|own
#       Unpacks BASE into ROOT, copies resolv.conf, mounts /proc and /dev/pts (dpkg logs the terminal
#       there). `hermetic`: no distribution repository, so apt reads only the ones a test adds.
#       `debian`: the host's Debian sources (bookworm, -updates, -security: our shlibdeps versions
#       come from there), so apt can install the system packages ours depend on. `own`: the base's
#       own sources (debootstrap's: its suite), for a base of another suite than the host's.
#   debian_chroot_umount ROOT
#       Unmounts what debian_chroot_unpack and the test mounted below ROOT (deepest first).

debian_chroot_base() {
  local cache=$1 suite=${2:-bookworm} name tmp
  name=debian-$suite-minbase
  [ "$suite" != bookworm ] || name=debian12-minbase
  local base=$cache/$name.tar
  mkdir -p "$cache"
  (
    flock 9
    [ -s "$base" ] && exit 0
    tmp=$(mktemp -d "$cache/debootstrap.XXXXXX")
    if ! debootstrap --variant=minbase "$suite" "$tmp/root" http://deb.debian.org/debian > "$tmp/log" 2>&1; then
      tail -5 "$tmp/log" >&2
      rm -rf "$tmp"
      exit 1
    fi
    rm -rf "$tmp/root/var/lib/apt/lists/"* "$tmp/root/var/cache/apt/"*.bin
    tar -C "$tmp/root" -cf "$base.tmp" . && mv "$base.tmp" "$base"
    rm -rf "$tmp"
  ) 9> "$cache/$name.lock" || return 1
  echo "$base"
}

debian_chroot_unpack() {
  local base=$1 root=$2 sources=$3
  mkdir -p "$root"
  tar -C "$root" -xf "$base"
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  case $sources in
    hermetic)
      : > "$root/etc/apt/sources.list"
      rm -f "$root/etc/apt/sources.list.d/"* ;;
    debian)
      if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        rm -f "$root/etc/apt/sources.list"
        cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/"
      fi ;;
    own) ;;
    *) echo "debian_chroot_unpack: sources must be hermetic, debian or own, not '$sources'" >&2; return 2 ;;
  esac
  mount -t proc proc "$root/proc"
  mount --bind /dev/pts "$root/dev/pts"
}

debian_chroot_umount() {
  local root=$1 m
  [ -d "$root" ] || return 0
  # /proc/mounts lists mount points in mount order: unmount in reverse.
  awk -v r="$root" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/mounts | tac |
    while IFS= read -r m; do umount -l "$m" 2>/dev/null || true; done
}
