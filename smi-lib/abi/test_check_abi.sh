#!/usr/bin/env bash
# check_abi.sh can fail: small libraries built here in versions, each with one planted change, checked
# against the first one's recorded ABI with the real script and its real suppressions.
#   test_check_abi.sh CHECK_ABI_SH
set -uo pipefail
check=$(realpath "$1")
here=$(dirname "$(realpath "$0")")
source "$here/../../tests/lib/checks.sh"
for tool in abidw abidiff cc; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/hipstack-abi-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

# build NAME SONAME SED_EDIT [DEBUG_FLAG]: the first version's header and definitions with SED_EDIT
# applied, built into $work/NAME/lib.so (header in $work/NAME/include).
header() {  # the first version's public header; each version edits it
  cat <<'EOF'
#include <stdint.h>
typedef struct hipstack_smi_thing { uint32_t struct_size; uint32_t count; const char* name; } hipstack_smi_thing;
typedef struct hs_value { int64_t number; } hs_value; /* no struct_size: callers hold it by value */
typedef enum hipstack_smi_colour { HIPSTACK_SMI_RED = 0, HIPSTACK_SMI_GREEN = 1 } hipstack_smi_colour;
int hipstack_smi_get_thing(hipstack_smi_thing* out);
int hipstack_smi_value(hs_value* out, hipstack_smi_colour colour);
int hipstack_smi_count(void);
EOF
}
build() {
  local name=$1 soname=$2 edit=$3 debug=${4:--g}
  mkdir -p "$work/$name/include"
  header | sed "$edit" > "$work/$name/include/thing.h"
  {  # the definitions, with the same edit
    echo '#include "thing.h"'
    echo 'int hipstack_smi_get_thing(hipstack_smi_thing* out) { out->name = "x"; return 0; }'
    echo 'int hipstack_smi_value(hs_value* out, hipstack_smi_colour colour) { out->number = colour; return 0; }'
    echo 'int hipstack_smi_count(void) { return 1; }'
    grep -q 'hipstack_smi_added' "$work/$name/include/thing.h" && echo 'int hipstack_smi_added(void) { return 2; }'
  } | sed "$edit" > "$work/$name/lib.c"
  cc $debug -shared -fPIC -I"$work/$name/include" -Wl,-soname,"$soname" "$work/$name/lib.c" -o "$work/$name/lib.so"
}
run() {  # run NAME: check_abi.sh on that version; prints its output, returns its status
  "$check" "$work/$1/lib.so" "$work/$1/include" "$work/baselines" > "$work/$1/out" 2>&1
}
expect() {  # expect STATUS NAME WHAT [TEXT]
  local want=$1 name=$2 what=$3 text=${4:-} rc=0
  run "$name" || rc=$?
  if [ "$rc" = "$want" ] && { [ -z "$text" ] || grep -q -- "$text" "$work/$name/out"; }; then
    pass "$what (exit $rc)"
  else
    fail "$what: exit $rc, wanted $want${text:+ and '$text'}"; sed 's/^/    /' "$work/$name/out"
  fi
}

build v1 libthing.so.0 ''
"$check" --update "$work/v1/lib.so" "$work/v1/include" "$work/baselines" > /dev/null || fail "--update"
[ -s "$work/baselines/libthing.so.0.abi.xz" ] && pass "--update records the baseline of the SONAME" || fail "no baseline recorded"
expect 0 v1 "the same library passes"

build removed-field libthing.so.0 's/uint32_t count; //'
expect 1 removed-field "a field removed from a size-prefixed struct fails" "data member deletion"
build removed-function libthing.so.0 '/hipstack_smi_count/d'
expect 1 removed-function "a function removed fails" "1 Removed"
build by-value-grown libthing.so.0 's/int64_t number; }/int64_t number; int64_t more; }/'
expect 1 by-value-grown "a field appended to a struct callers hold by value fails" "type size changed"
build changed-parameter libthing.so.0 's/hs_value\* out, hipstack_smi_colour colour/hs_value* out, int64_t colour/'
expect 1 changed-parameter "a parameter's type changed fails"

build appended-field libthing.so.0 's/const char\* name; }/const char* name; double later; }/'
expect 0 appended-field "a field appended to a size-prefixed struct passes"
build added-function libthing.so.0 's/^int hipstack_smi_count(void);/int hipstack_smi_count(void);\nint hipstack_smi_added(void);/'
expect 0 added-function "an added function passes and is listed" "hipstack_smi_added"
build added-enumerator libthing.so.0 's/HIPSTACK_SMI_GREEN = 1 }/HIPSTACK_SMI_GREEN = 1, HIPSTACK_SMI_BLUE = 2 }/'
expect 0 added-enumerator "an appended enumerator passes"

# The incompatible change with the SOVERSION moved: it needs the new SONAME's baseline.
build next-soname libthing.so.1 '/hipstack_smi_count/d'
expect 1 next-soname "a new SONAME without its baseline fails" "no recorded ABI for libthing.so.1"
"$check" --update "$work/next-soname/lib.so" "$work/next-soname/include" "$work/baselines" > /dev/null
expect 0 next-soname "a new SONAME with its recorded baseline passes"

build no-debug libthing.so.0 '' -g0
expect 77 no-debug "a library without debug information cannot be checked (skip, said)" "no debug information"
[ "$failures" = 0 ]
