# A clean clone of the repository's HEAD in a clean Debian 12 chroot: what CI or a new user meets on a
# fresh machine (sourced, not run; the tests of tests/deps and tests/superbuild use it).
#   fresh_clone_chroot SOURCE_DIR CACHE_DIR NAME
#       Unpacks the shared base of scripts/lib/debian_chroot.sh (Debian's sources, nothing else
#       installed) into a new folder /var/tmp/NAME.XXXXXX and clones SOURCE_DIR's HEAD to its /src.
#       Sets `work` (the folder: logs go there) and `root` (the chroot); removes both at exit unless
#       HIPSTACK_FRESH_KEEP=1 (the path is printed). Exits 77 when it cannot run here.
#   in_chroot COMMAND
#       Runs COMMAND with bash in /src of the chroot, with a bare environment.
# Needs `checks.sh` and `debian_chroot.sh` sourced first.
fresh_clone_chroot() {
  local src=$1 cache=$2 name=$3 base tool
  [ "$(id -u)" = 0 ] || { echo "SKIP: needs root (debootstrap, chroot, mount)"; exit 77; }
  for tool in debootstrap chroot mount flock tar git; do
    command -v "$tool" > /dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
  done
  base=$(debian_chroot_base "$cache") || { echo "SKIP: debootstrap failed (no network to deb.debian.org?)"; exit 77; }
  work=$(mktemp -d "/var/tmp/$name.XXXXXX") || exit 1
  root=$work/root
  trap _fresh_clone_cleanup EXIT
  # The root a mount point of its own, as a machine's / is: the differential tests make their mount
  # namespace private (`unshare -m --propagation private`), which fails with EINVAL on a chroot whose
  # root is a plain folder.
  mkdir -p "$root" && mount --bind "$root" "$root" || { echo "FAIL - could not bind $root onto itself"; exit 1; }
  debian_chroot_unpack "$base" "$root" debian || { echo "FAIL - could not unpack $base"; exit 1; }
  # What the tests use of a running machine: devices (/dev/shm, /dev/null, /dev/urandom), sysfs
  # (read-only: run.sh looks for an AMD GPU there) and the network (resolv.conf was copied). Services
  # are not started by package installs (policy-rc.d); the tests start their own.
  mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev"
  mount -t sysfs -o ro sysfs "$root/sys"
  printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
  chmod +x "$root/usr/sbin/policy-rc.d"
  # The host's downloaded packages: the versions are the ones the chroot's sources name; a package the
  # host lacks is downloaded. What is tested is what the commands install.
  [ -d /var/cache/apt/archives ] && mount --bind /var/cache/apt/archives "$root/var/cache/apt/archives"
  # A clean clone of what is committed (what CI checks out), with no build tree and no ignored file.
  # git itself is not in the base: the clone is made here and copied in.
  git clone --quiet --no-hardlinks "$src" "$root/src" || { echo "FAIL - git clone $src"; exit 1; }
  echo "# testing $(git -C "$root/src" log -1 --format='%h %s')"
}

_fresh_clone_cleanup() {
  debian_chroot_umount "$root"
  if [ "${HIPSTACK_FRESH_KEEP:-0}" = 1 ]; then echo "# kept: $root"; else rm -rf "$work"; fi
}

in_chroot() {
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive \
    LANG=C.UTF-8 bash -c "cd /src && $1"
}
