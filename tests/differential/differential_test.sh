#!/bin/bash
# One differential test: rocm-smi and hipstack-smi on the same capture.
#
#   differential_test.sh HIPSTACK_SMI CAPTURE_SYS_DIR [WORK_DIR]
#
#   1. run_rocm_smi.sh --allow-partial CAPTURE_SYS_DIR WORK_DIR/rocm-smi.json
#      (rocm-smi's crashes on the OverDrive flags of RDNA2+ cards are listed but
#      do not fail the test: those flags feed no hipstack metric; set
#      DIFF_STRICT=1 to fail on any rocm-smi crash);
#   2. HIPSTACK_SMI --sysfs-root CAPTURE_SYS_DIR static --json  > WORK_DIR/static.json
#      HIPSTACK_SMI --sysfs-root CAPTURE_SYS_DIR metric --json  > WORK_DIR/metric.json
#      HIPSTACK_SMI --sysfs-root CAPTURE_SYS_DIR partition --json  > WORK_DIR/partition.json
#      (the partitions: rocm-smi 6 and later list each as a device)
#      (HIPSTACK_SYSFS_ROOT overrides the --sysfs-root argument, e.g. the
#      capture root instead of its sys/ folder);
#   3. compare.py --capture CAPTURE_SYS_DIR WORK_DIR/rocm-smi.json WORK_DIR/static.json
#      WORK_DIR/metric.json (COMPARE_ARGS adds options, e.g. --allow-missing; --capture lets
#      precedence.py check hipstack's documented source precedence against the capture's files).
#
# Exit: compare.py's (0 agree, 1 disagree), 77 skip (see run_rocm_smi.sh),
# other run_rocm_smi.sh failures as they are, 5 hipstack-smi failed.
# For ctest: add_test(... COMMAND differential_test.sh $<TARGET_FILE:hipstack-smi> DIR)
# with set_tests_properties(... PROPERTIES SKIP_RETURN_CODE 77).
set -u
if [ $# -lt 2 ]; then
    echo "usage: differential_test.sh HIPSTACK_SMI CAPTURE_SYS_DIR [WORK_DIR]" >&2
    exit 1
fi
hip=$1 capture=$2
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -ge 3 ]; then
    work=$3; mkdir -p "$work" || exit 1
else
    work=$(mktemp -d /tmp/hipstack-diff.XXXXXX) || exit 1
    trap 'rm -rf "$work"' EXIT
fi
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)

partial=--allow-partial
[ "${DIFF_STRICT:-0}" = 1 ] && partial=
# shellcheck disable=SC2086
"$here/run_rocm_smi.sh" $partial "$capture" "$work/rocm-smi.json"
rc=$?
[ $rc -eq 0 ] || exit $rc

# hipstack reads the capture twice: as the flat folder it is, and laid out as a live tree (symlinks,
# no repairs), so both shapes are held to rocm-smi's answers.
root=${HIPSTACK_SYSFS_ROOT:-$capture}
if ! "$py" "$here/../../tools/live_tree.py" "$root" "$work/live" > "$work/live.log" 2>&1; then
    echo "differential_test.sh: live_tree.py failed:" >&2
    cat "$work/live.log" >&2
    exit 5
fi
for shape in flat live; do
    shape_root=$root
    [ "$shape" = live ] && shape_root=$work/live
    for sub in static metric partition; do
        if ! "$hip" --sysfs-root "$shape_root" "$sub" --json > "$work/$shape-$sub.json" 2> "$work/$sub.err"; then
            echo "differential_test.sh: $hip --sysfs-root $shape_root $sub --json failed:" >&2
            cat "$work/$sub.err" >&2
            exit 5
        fi
    done
done
rc=0
for shape in flat live; do
    echo "== hipstack on the $shape capture"
    # shellcheck disable=SC2086
    shape_root=$root
    [ "$shape" = live ] && shape_root=$work/live
    # --capture: the evidence for hipstack's documented source precedence (precedence.py)
    "$py" "$here/compare.py" ${COMPARE_ARGS:-} --capture "$shape_root" "$work/rocm-smi.json" \
        "$work/$shape-static.json" "$work/$shape-metric.json" "$work/$shape-partition.json" || rc=$?
done
exit $rc
