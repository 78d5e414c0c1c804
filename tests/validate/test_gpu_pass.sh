#!/bin/bash
# validation/scripts/gpu_pass.sh exits non-zero when any step does not give its expected exit status,
# and still prints every step's output: run over a staged folder of fake programs (no GPU needed)
# whose exit statuses are set per case.
#   test_gpu_pass.sh GPU_PASS_SH
set -u
gpu_pass=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/checks.sh
source "$src/tests/lib/checks.sh"
work=$(mktemp -d /tmp/hipstack-gpu-pass.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/dir/modules" "$work/bin" "$work/out"
# fake NAME: prints its name and exits with the status in $work/rc/NAME (default: expected one)
fake() {
  printf '#!/bin/sh\necho "fake %s $*"\nexit $(cat "%s/rc/%s" 2>/dev/null || echo %s)\n' "$2" "$work" "$2" "$3" > "$1"
  chmod +x "$1"
}
mkdir -p "$work/rc"
fake "$work/bin/nvidia-smi" nvidia-smi 0
fake "$work/bin/python3" torch 0   # compare_with_torch.py runs under python3
for p in hipstack-info hipstack-validate hip-conformance; do fake "$work/dir/$p" "$p" 0; done
for m in vector_add memtest gemm stress; do fake "$work/dir/modules/$m" "$m" 1; done

run_pass() { PATH="$work/bin:$PATH" sh "$gpu_pass" "$work/dir" "$work/out" > "$work/log" 2>&1; }
set_rc() { rm -f "$work"/rc/*; [ $# = 2 ] && echo "$2" > "$work/rc/$1"; }

set_rc
rc=0; run_pass || rc=$?
[ $rc = 0 ] && pass "every step as expected: exit 0" || fail "every step as expected: exit $rc: $(cat "$work/log")"
grep -q "every step gave its expected exit status" "$work/log" && pass "says so" || fail "no summary: $(cat "$work/log")"

for c in "hipstack-validate 1" "hip-conformance 2" "nvidia-smi 9" "gemm 0" "stress 3" "torch 77" "hipstack-info 1"; do
  set -- $c
  set_rc "$1" "$2"
  rc=0; run_pass || rc=$?
  [ $rc = 1 ] && pass "$1 exits $2: the pass exits 1" || fail "$1 exits $2: the pass exits $rc"
  grep -q "FAILED:" "$work/log" && grep -q "rc=$2, expected" "$work/log" && pass "$1 exits $2: named in the summary" ||
    fail "$1 exits $2: not named: $(cat "$work/log")"
  # Every step still ran and printed its output (the last one included).
  grep -q "fake torch" "$work/log" && grep -q "fake hipstack-info" "$work/log" && pass "$1 exits $2: every step's output kept" ||
    fail "$1 exits $2: output lost: $(cat "$work/log")"
done
[ "$failures" = 0 ]
