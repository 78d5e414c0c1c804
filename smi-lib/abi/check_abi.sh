#!/usr/bin/env bash
# libhipstack-smi's ABI against the recorded ABI of its SONAME (docs/api.md, "ABI"):
#   check_abi.sh [--update] LIBRARY HEADERS_DIR BASELINE_DIR
# The baseline of a SONAME is BASELINE_DIR/<SONAME>.abi.xz, abidw's description of the public ABI (the
# types the public headers define, the exported symbols) of the first release with that SONAME.
# Compares the library's ABI with it through abidiff (abigail-tools):
#   - an incompatible change (a symbol removed, a type of the public API changed in size or layout, a
#     function's parameters changed) fails, unless the SOVERSION moved: a new SONAME needs its own
#     baseline, recorded with --update in the same change;
#   - compatible changes pass, the added symbols listed: symbols added, enumerators appended, fields
#     appended to the C API's size-prefixed structs (suppressions.abignore);
#   - no baseline for this SONAME fails, saying how to record one.
# --update records the library's ABI as the baseline of its SONAME. Needs the library's debug
# information (a RelWithDebInfo or Debug build): without it the check cannot see types and exits 77.
# Exit: 0 compatible, 1 incompatible or no baseline, 2 usage, 77 cannot check here.
set -euo pipefail
update=0
if [ "${1:-}" = --update ]; then update=1; shift; fi
[ $# -eq 3 ] || { echo "usage: check_abi.sh [--update] LIBRARY HEADERS_DIR BASELINE_DIR" >&2; exit 2; }
library=$1 headers=$2 baselines=$3
for tool in abidw abidiff objdump readelf xz; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (abigail-tools, binutils, xz-utils)"; exit 77; }
done
[ -f "$library" ] || { echo "check_abi.sh: no library at $library" >&2; exit 2; }
readelf -S --wide "$library" | grep -q '\.debug_info' ||
  { echo "SKIP: $library has no debug information: build with -g (RelWithDebInfo) to check its ABI"; exit 77; }
soname=$(objdump -p "$library" | awk '$1 == "SONAME" { print $2 }')
[ -n "$soname" ] || { echo "check_abi.sh: $library has no SONAME" >&2; exit 1; }
baseline=$baselines/$soname.abi.xz
work=$(mktemp -d "${TMPDIR:-/tmp}/hipstack-abi.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Only what the public headers define; no paths or locations, so a baseline does not depend on where
# or in which folder it was built.
abidw --headers-dir "$headers" --drop-private-types --no-show-locs --no-corpus-path --no-comp-dir-path \
      --type-id-style hash "$library" > "$work/current.abi"
if [ $update = 1 ]; then
  mkdir -p "$baselines"
  xz -9 -c "$work/current.abi" > "$baseline"
  echo "recorded the ABI of $soname in $baseline ($(grep -c '<elf-symbol' "$work/current.abi") symbols)"
  exit 0
fi
if [ ! -f "$baseline" ]; then
  echo "FAIL: no recorded ABI for $soname in $baselines: a new SONAME records its baseline with" \
       "smi-lib/abi/check_abi.sh --update (docs/api.md, \"ABI\")"
  exit 1
fi
xz -dc "$baseline" > "$work/baseline.abi"
rc=0
abidiff --no-added-syms --fail-no-debug-info --suppressions "$(dirname "$0")/suppressions.abignore" \
        "$work/baseline.abi" "$work/current.abi" > "$work/report" 2>&1 || rc=$?
# abidiff's exit status is a bit set: 1 error, 2 usage, 4 the ABI changed, 8 a change known to be
# incompatible (a symbol removed). Added symbols are left out (--no-added-syms), and so are fields
# appended to the C API's size-prefixed structs (suppressions.abignore): any change left is one a
# program built against the baseline can trip on (abidiff counts a removed field as 4, not 8).
if (( rc & 3 )); then
  echo "FAIL: abidiff could not compare (exit $rc):"; cat "$work/report"; exit 1
fi
if (( rc & 12 )); then
  echo "FAIL: $library is not ABI-compatible with the recorded ABI of $soname ($baseline):"
  cat "$work/report"
  echo "An incompatible change moves the SOVERSION (the project's major version) and records the new"
  echo "SONAME's baseline with check_abi.sh --update (docs/api.md, \"ABI\")."
  exit 1
fi
added=$(abidiff "$work/baseline.abi" "$work/current.abi" 2>/dev/null | grep -E "^  \[A\] " || true)
echo "ok: $soname is compatible with its recorded ABI ($(grep -c '<elf-symbol' "$work/current.abi") symbols)"
[ -z "$added" ] || { echo "added since the baseline:"; echo "$added"; }
