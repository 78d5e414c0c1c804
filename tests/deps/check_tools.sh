#!/bin/bash
# Checks that every tool of TOOLS_FILE (tests/deps/tools.txt) is installed under ROOT ("/" for this
# machine, else a chroot): commands on PATH=/usr/sbin:/usr/bin:/sbin:/bin, Python modules imported
# by /usr/bin/python3. Prints one line per tool; exits 1 naming the missing ones, 2 on bad input.
#   check_tools.sh ROOT TOOLS_FILE
set -u
root=$1 list=$2
[ -r "$list" ] || { echo "check_tools.sh: cannot read $list" >&2; exit 2; }
in_root() {
  if [ "$root" = / ]; then env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
  else chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; fi
}
missing=() count=0
while read -r kind name used; do
  case $kind in ''|'#'*) continue ;; esac
  count=$((count + 1))
  case $kind in
    command) in_root sh -c 'command -v "$1"' sh "$name" > /dev/null 2>&1 ;;
    python3) in_root /usr/bin/python3 -c "import $name" > /dev/null 2>&1 ;;
    *) echo "check_tools.sh: $list: unknown kind '$kind' for $name" >&2; exit 2 ;;
  esac
  if [ $? = 0 ]; then
    echo "ok   - $kind $name"
  else
    echo "FAIL - $kind $name is missing (used by: $used)"
    missing+=("$name")
  fi
done < "$list"
[ $count -gt 0 ] || { echo "check_tools.sh: no tools in $list" >&2; exit 2; }
if [ ${#missing[@]} -gt 0 ]; then
  echo "check_tools.sh: ${#missing[@]} of $count missing under $root: ${missing[*]}"
  exit 1
fi
echo "check_tools.sh: all $count present under $root"
