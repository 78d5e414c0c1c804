#!/bin/bash
# The shipped unit, monitor-daemon/systemd/hipstack-smid.service, checked by systemd-analyze:
# `verify` (syntax, directives, the executable exists) and `security --offline=yes` with an
# exposure of at most 2.5 (threshold 25). ExecStart points at the built binary in a copy of the
# unit, since verify needs the executable to exist.
#
# Usage: test_systemd_unit.sh HIPSTACK_SMID UNIT_FILE
# Exit: 0 pass, 1 fail, 77 skip (no systemd-analyze).
set -euo pipefail

smid=${1:?usage: $0 HIPSTACK_SMID UNIT_FILE}
unit=${2:?usage: $0 HIPSTACK_SMID UNIT_FILE}
if ! command -v systemd-analyze >/dev/null; then
  echo "SKIP: systemd-analyze is not installed"
  exit 77
fi
[[ -x $smid ]] || { echo "FAIL: $smid is not an executable"; exit 1; }
smid=$(realpath "$smid")  # ExecStart needs an absolute path
grep -q '^ExecStart=/usr/sbin/hipstack-smid ' "$unit" || { echo "FAIL: unexpected ExecStart in $unit"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/smid-unit-XXXXXX")
trap 'rm -rf "$work"' EXIT
copy="$work/hipstack-smid.service"
sed "s#^ExecStart=/usr/sbin/hipstack-smid #ExecStart=$smid #" "$unit" >"$copy"
grep '^ExecStart=' "$copy"

rc=0
# verify prints its complaints on stderr and may still exit 0 for some of them: any output fails.
if ! systemd-analyze verify "$copy" >"$work/verify.out" 2>&1; then rc=1; fi
if [[ -s $work/verify.out ]]; then rc=1; fi
if [[ $rc -ne 0 ]]; then
  echo "FAIL: systemd-analyze verify:"
  cat "$work/verify.out"
else
  echo "systemd-analyze verify: clean"
fi

security_rc=0
systemd-analyze security --offline=yes --threshold=25 --no-pager "$copy" >"$work/security.out" 2>&1 || security_rc=$?
exposure=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' "$work/security.out")
echo "exposure: ${exposure:-unknown} (threshold 2.5)"
if [[ -z $exposure || $security_rc -ne 0 ]]; then
  echo "FAIL: systemd-analyze security --threshold=25 (rc $security_rc); what adds to the exposure:"
  grep '✗' "$work/security.out" || cat "$work/security.out"
  rc=1
fi
exit $rc
