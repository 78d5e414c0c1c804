#!/usr/bin/env bash
# After a `source` component's `DESTDIR=STAGE_DIR cmake --install`: records the files it
# installed (RECORD_DIR/COMPONENT.files, relative to the stage root) and makes its RUNPATHs relocatable.
#   record.sh COMPONENT INSTALL_MANIFEST STAGE_DIR PREFIX RECORD_DIR BUILD_ROOT
# A RUNPATH entry inside the staged prefix (hipcc's -rpath, say) becomes $ORIGIN-relative; an entry
# into the stage or the build tree (BUILD_ROOT) otherwise is refused: it would not exist where the
# package is installed.
set -euo pipefail
[ $# -eq 6 ] || { echo "usage: record.sh COMPONENT INSTALL_MANIFEST STAGE_DIR PREFIX RECORD_DIR BUILD_ROOT" >&2; exit 2; }
component=$1 install_manifest=$2 stage_dir=$3 prefix=$4 record_dir=$5 build_root=$6
die() { echo "superbuild: component '$component': $*" >&2; exit 1; }
[ -f "$install_manifest" ] || die "no $install_manifest: did the install step run?"
stage_prefix=$stage_dir$prefix

is_elf() { [ "$(head -c 4 "$1" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ]; }

mkdir -p "$record_dir"
files=$record_dir/$component.files.tmp
: > "$files"
# install_manifest.txt names the installed paths without DESTDIR: the file is at STAGE_DIR/<path>.
while IFS= read -r installed || [ -n "$installed" ]; do
  [ -n "$installed" ] || continue
  path=$stage_dir$installed
  [ -e "$path" ] || [ -L "$path" ] || die "$installed is in $install_manifest but not in the stage"
  echo "${installed#/}" >> "$files"
  [ -f "$path" ] && [ ! -L "$path" ] && is_elf "$path" || continue
  runpath=$(patchelf --print-rpath "$path" 2>/dev/null) || continue
  [ -n "$runpath" ] || continue
  new=()
  IFS=: read -r -a entries <<<"$runpath"
  for entry in "${entries[@]}"; do
    case $entry in
      "$stage_prefix"|"$stage_prefix"/*)
        rel=$(realpath -m --relative-to="$(dirname "$path")" "$entry")
        if [ "$rel" = . ]; then new+=('$ORIGIN'); else new+=("\$ORIGIN/$rel"); fi ;;
      "$stage_dir"/*|"$build_root"/*) die "$path has RUNPATH $entry, which exists only on this build machine" ;;
      *) new+=("$entry") ;;
    esac
  done
  joined=$(IFS=:; echo "${new[*]}")
  if [ "$joined" != "$runpath" ]; then
    # Keep the file's time: `cmake --install` then finds it up to date and does not copy it again.
    touch -r "$path" "$files.time"
    patchelf --set-rpath "$joined" "$path"
    touch -r "$files.time" "$path"
  fi
done < "$install_manifest"
LC_ALL=C sort -u "$files" > "$record_dir/$component.files"
rm -f "$files" "$files.time"
echo "superbuild: $component: recorded $(wc -l < "$record_dir/$component.files") installed files"
