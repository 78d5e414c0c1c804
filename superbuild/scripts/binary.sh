#!/usr/bin/env bash
# The `binary` origin of the superbuild (docs/superbuild.md): Debian packages fetched with apt-get
# download, checked against the manifest's SHA-256, unpacked, relocated from /usr into the prefix and
# given RUNPATHs that find the prefix's own libraries.
#
#   binary.sh fetch COMPONENT DOWNLOAD_DIR PACKAGE=VERSION:ARCH:SHA256...
#       Puts each .deb into DOWNLOAD_DIR/sha256/<sha256>/ (a cached file with the right checksum is used
#       as is, so reruns need no network).
#   binary.sh stage COMPONENT DOWNLOAD_DIR STAGE_DIR PREFIX RECORD_DIR WRAPPER_DIR
#                   [--relocate FROM=TO]... [--wrapper FILE[:NAME]]... [--provides NAME]... -- PACKAGE=VERSION:ARCH:SHA256...
#       Unpacks the cached .debs into STAGE_DIR/PREFIX and writes RECORD_DIR/COMPONENT.{files,debs,usr-refs}.
#       Every Depends of every .deb must be provided (--provides) by this component or those it depends on.
set -euo pipefail
multiarch=x86_64-linux-gnu

die() { echo "superbuild: component '$component': $*" >&2; exit 1; }

# cached_deb SHA256 → the cached .deb's path (empty when not cached)
cached_deb() {
  local dir=$download_dir/sha256/$1
  [ -d "$dir" ] || return 0
  find "$dir" -maxdepth 1 -name '*.deb' -print -quit
}

parse_spec() {  # PACKAGE=VERSION:ARCH:SHA256 → package version arch sha
  package=${1%%=*}; local rest=${1#*=}
  sha=${rest##*:}; rest=${rest%:*}
  arch=${rest##*:}; version=${rest%:*}
  [[ $sha =~ ^[0-9a-f]{64}$ ]] || die "package $package: '$sha' is not a SHA-256 (64 hex digits)"
}

fetch() {
  local spec cached tmp got file
  for spec in "$@"; do
    parse_spec "$spec"
    cached=$(cached_deb "$sha")
    if [ -n "$cached" ] && [ "$(sha256sum < "$cached" | cut -d' ' -f1)" = "$sha" ]; then
      echo "superbuild: $component: $package $version cached ($cached)"
      continue
    fi
    tmp=$(mktemp -d "$download_dir/.fetch.XXXXXX")
    # apt checks the file against the signed archive index; we check it against the manifest below.
    if ! (cd "$tmp" && apt-get download -q "$package:$arch=$version" >download.log 2>&1); then
      cat "$tmp/download.log" >&2
      rm -rf "$tmp"
      die "apt-get download $package:$arch=$version failed (is Debian's archive reachable, and that version still in it?)"
    fi
    file=$(find "$tmp" -maxdepth 1 -name '*.deb' -print -quit)
    [ -n "$file" ] || die "apt-get download $package=$version left no .deb"
    got=$(sha256sum < "$file" | cut -d' ' -f1)
    if [ "$got" != "$sha" ]; then
      rm -rf "$tmp"
      die "package $package $version: SHA-256 mismatch: the manifest says $sha, the downloaded .deb has $got (apt verified it against the archive's signed index: the manifest's pin is wrong or the archive changed)"
    fi
    mkdir -p "$download_dir/sha256/$sha"
    mv "$file" "$download_dir/sha256/$sha/"
    rm -rf "$tmp"
    echo "superbuild: $component: fetched $package $version ($sha)"
  done
}

is_elf() { [ "$(head -c 4 "$1" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ]; }

# Depends: "a (>= 1), b | c, d:any" → the alternatives of each entry, one entry a line, names only.
depends_names() {
  tr ',' '\n' <<<"$1" | sed -e 's/([^)]*)//g' -e 's/:[a-z0-9]*//g' -e 's/  */ /g' -e 's/^ //' -e 's/ $//' | grep -v '^$' || true
}

stage() {
  local stage_dir=$1 prefix=$2 record_dir=$3 wrapper_dir=$4; shift 4
  local relocations=() wrappers=() provides=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case $1 in
      --relocate) relocations+=("$2"); shift 2 ;;
      --wrapper) wrappers+=("$2"); shift 2 ;;
      --provides) provides+=("$2"); shift 2 ;;
      *) die "stage: unknown option '$1'" ;;
    esac
  done
  shift
  local -A provided=()
  for entry in "${provides[@]}"; do provided[$entry]=1; done
  local work=$record_dir/$component.work spec deb depends entry alt ok
  rm -rf "$work"; mkdir -p "$work/root" "$work/tree"
  : > "$record_dir/$component.debs"
  for spec in "$@"; do
    parse_spec "$spec"
    deb=$(cached_deb "$sha")
    [ -n "$deb" ] || die "package $package $version is not in $download_dir (run the download step)"
    [ "$(dpkg-deb -f "$deb" Package)" = "$package" ] && [ "$(dpkg-deb -f "$deb" Version)" = "$version" ] ||
      die "$deb is not $package $version"
    depends=$(dpkg-deb -f "$deb" Pre-Depends Depends | sed -n 's/^\(Pre-Depends\|Depends\): //p' | paste -sd, -)
    # The manifest's dependencies must cover the package's own: what is neither bundled nor declared
    # as a system dependency would be missing where our packages are installed.
    while IFS= read -r entry; do
      ok=0
      for alt in ${entry//|/ }; do
        [ -n "${provided[$alt]:-}" ] && ok=1
      done
      [ $ok = 1 ] || die "package $package depends on '$entry', which neither this component nor one it depends on provides: add it to 'depends' (a binary or system component)"
    done < <(depends_names "$depends")
    printf '%s|%s|%s|%s|%s\n' "$package" "$version" "$arch" "$sha" "$depends" >> "$record_dir/$component.debs"
    dpkg-deb -x "$deb" "$work/root"
  done
  # Relocate: usr/lib/<multiarch>/X → lib/X, usr/X → X; --relocate FROM=TO first (FROM in the .deb's tree).
  local r from to
  for r in "${relocations[@]}"; do
    from=${r%%=*}; to=${r#*=}
    [ -e "$work/root/$from" ] || die "--relocate: $from is not in the packages"
    mkdir -p "$(dirname "$work/tree/$to")"
    mv "$work/root/$from" "$work/tree/$to"
  done
  if [ -d "$work/root/usr/lib/$multiarch" ]; then
    mkdir -p "$work/tree/lib"
    cp -a "$work/root/usr/lib/$multiarch/." "$work/tree/lib/"
    rm -rf "$work/root/usr/lib/$multiarch"
  fi
  [ -d "$work/root/usr" ] && cp -a "$work/root/usr/." "$work/tree/"
  local stray
  stray=$(find "$work/root" -mindepth 1 -maxdepth 1 ! -name usr)
  [ -z "$stray" ] || die "files outside /usr, which the relocation does not handle: $stray"
  # Debian's lintian overrides name /usr paths; they mean nothing in our prefix.
  rm -rf "$work/tree/share/lintian"
  local w
  # --wrapper FILE or FILE:NAME: superbuild/wrappers/FILE becomes bin/NAME (replacing the .deb's own).
  for w in "${wrappers[@]}"; do
    mkdir -p "$work/tree/bin"
    install -m 0755 "$wrapper_dir/${w%%:*}" "$work/tree/bin/${w#*:}"
  done
  # Absolute symlinks into /usr would leave the prefix: refuse them.
  stray=$(find "$work/tree" -type l -lname '/*' -printf '%P -> %l\n')
  [ -z "$stray" ] || die "absolute symlinks: $stray"
  # So would relative ones that climb out of it once usr/lib/<multiarch> became lib.
  local link target
  while IFS= read -r -d '' link; do
    target=$(realpath -m --relative-to="$work/tree" "$(dirname "$link")/$(readlink "$link")")
    [[ $target != ..* ]] || die "symlink ${link#"$work/tree/"} -> $(readlink "$link") leaves the prefix"
  done < <(find "$work/tree" -type l -print0)
  # RUNPATH of every dynamic ELF file: the prefix's lib/, relative to the file ($ORIGIN), so the
  # relocated libraries load each other (not the system's copies) wherever the prefix is.
  local f rel
  while IFS= read -r -d '' f; do
    is_elf "$f" || continue
    patchelf --print-needed "$f" >/dev/null 2>&1 || continue
    rel=$(realpath -m --relative-to="$(dirname "$f")" "$work/tree/lib")
    if [ "$rel" = . ]; then rel='$ORIGIN'; else rel="\$ORIGIN/$rel"; fi
    patchelf --set-rpath "$rel" "$f"
  done < <(find "$work/tree" -type f -print0)
  # Text files that still name Debian's /usr paths (CMake package configs, mostly): recorded, not rewritten.
  (cd "$work/tree" && grep -rlI -e /usr/lib -e /usr/include --exclude-dir=doc . | sed 's|^\./||' | sort) \
    > "$record_dir/$component.usr-refs" || true
  # Into the stage; the list of what this component put there, relative to the stage root.
  mkdir -p "$stage_dir$prefix"
  cp -a "$work/tree/." "$stage_dir$prefix/"
  (cd "$work/tree" && find . ! -type d | sed "s|^\./|${prefix#/}/|" | LC_ALL=C sort) > "$record_dir/$component.files"
  rm -rf "$work"
  echo "superbuild: $component: staged $(wc -l < "$record_dir/$component.files") files into $stage_dir$prefix"
}

[ $# -ge 3 ] || { echo "usage: binary.sh fetch|stage COMPONENT DOWNLOAD_DIR ..." >&2; exit 2; }
command=$1 component=$2 download_dir=$3
shift 3
mkdir -p "$download_dir"
case $command in
  fetch) fetch "$@" ;;
  stage) stage "$@" ;;
  *) echo "binary.sh: unknown command '$command'" >&2; exit 2 ;;
esac
