#!/bin/bash
# Run AMD's rocm-smi against a recorded sysfs capture and write what it prints as JSON: the host's
# 5.2.3 (Debian 12 packages rocm-smi + librocm-smi64-1), or, with ROCM_SMI_ROOT, the rocm-smi of a
# Debian root made by tests/lib/rocm_root.sh (7.2.4 from experimental on sid), run there with chroot.
#
#   run_rocm_smi.sh [--allow-partial] [--no-fix] CAPTURE_SYS_DIR OUT_JSON
#
# 1. tools/live_tree.py CAPTURE_SYS_DIR $tmp/sys --for-rocm-smi lays the flat
#    capture out as a live /sys (its FIX/SYNTH/FILL lines go to OUT_JSON.notes);
# 2. inside `unshare -m --propagation private` the tree is bind-mounted over /sys
#    and a tmpfs over /dev/shm (rocm_smi_lib leaves mutex files there); the mount
#    namespace dies with the last process in it, so no mount can outlive the run;
# 3. `rocm-smi -a --json` plus the flags -a leaves out (see EXTRA below) runs
#    once; if it crashes (rocm_smi_lib asserts on some captures), every flag is
#    run alone to name the one(s) that crash and to keep what the others print;
# 4. `rocm-smi -s` runs in text mode as well: its JSON mode reuses the keys
#    "0","1",... for every clock, so each clock's level list overwrites the
#    previous one.  The text is turned into keys "Supported <clk> frequencies: <n>"
#    (exactly the strings rocm-smi prints, joined), added to the device objects.
#
# OUT_JSON: {"card0": {...rocm-smi keys...}, "system": {...}} -- rocm-smi's own
# keys and strings.  OUT_JSON.notes: the tree repairs plus, per rocm-smi call,
# "RUN <flags> rc=<rc>" and "CRASH <flags>: <message>" lines.
#
# Exit status: 0 ok (rocm-smi's own rc 2 for "some metric not supported" is ok);
#   77 skip: not root, unshare/mount not permitted, rocm-smi not installed, or the
#      capture has no amdgpu card (radeon only: rocm-smi ignores it);
#   2  rocm-smi read no card or crashed before printing anything;
#   3  rocm-smi crashed on some flags (named on stderr); OUT_JSON holds what the
#      other flags printed (--allow-partial turns this into 0);
#   4  a rocm-smi call ran past its time limit (ROCM_SMI_TIMEOUT, default 60 s);
#   1  usage or internal error.
set -u

allow_partial=0
fix=--for-rocm-smi
while [ $# -gt 0 ]; do
    case "$1" in
        --allow-partial) allow_partial=1; shift ;;
        --no-fix) fix=; shift ;;   # to see what rocm-smi does with the raw capture
        -h|--help) sed -n '2,38p' "$0"; exit 0 ;;
        --) shift; break ;;
        -*) echo "run_rocm_smi.sh: unknown option $1" >&2; exit 1 ;;
        *) break ;;
    esac
done
if [ $# -ne 2 ]; then
    echo "usage: run_rocm_smi.sh [--allow-partial] [--no-fix] CAPTURE_SYS_DIR OUT_JSON" >&2
    exit 1
fi
capture=$1
out_json=$2
here=$(cd "$(dirname "$0")" && pwd)
live_tree=${LIVE_TREE:-$here/../../tools/live_tree.py}
timeout_s=${ROCM_SMI_TIMEOUT:-60}
# rocm-smi is `#!/usr/bin/env python3`; Debian's module path wants Debian's python
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
smi=${ROCM_SMI:-/usr/bin/rocm-smi}
oracle_root=${ROCM_SMI_ROOT:-}   # empty: the host's rocm-smi
[ -n "$oracle_root" ] && py=/usr/bin/python3   # the host's for merging, the root's own inside the chroot

skip() { echo "run_rocm_smi.sh: SKIP: $*" >&2; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (mount namespace + bind mount over /sys)"
# The file itself, as the root sees it: a track's /opt/hipstack is an absolute link (alternatives)
# that means nothing outside the root.
smi_file=$oracle_root$smi
[ -n "$oracle_root" ] && smi_file=$oracle_root$(chroot "$oracle_root" readlink -f "$smi" 2>/dev/null)
[ -f "$smi_file" ] || skip "rocm-smi not installed ($oracle_root$smi)"
# How rocm-smi is started: Debian's rocm-smi is a Python script, run with Debian's python (above);
# a release track's /opt/hipstack/bin/rocm-smi is a shell wrapper (it sets the library path), run as
# users run it ("-": no interpreter given).
smi_py=$py
head -n1 "$smi_file" | grep -q python || smi_py=-
command -v unshare >/dev/null || skip "unshare not found"
unshare -m --propagation private true 2>/dev/null || skip "unshare -m not permitted here"
[ -d "$capture" ] || { echo "run_rocm_smi.sh: no such capture $capture" >&2; exit 1; }

tmp=$(mktemp -d /tmp/rocm-smi-diff.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
notes=$out_json.notes
: > "$notes" || exit 1

# LIVE_TREE_ARGS: extra live_tree.py options, e.g. "--skip-fix nul" (diagnosis)
# The repairs are 5.2.3's needs. 7.x reads the deep-sleep "S:" line of pp_dpm_* itself (the MI300X
# captures: "socclk clock level: S") and starts without hwmon in0_label (r7-240), so those two are
# left out for it and its clocks and voltages stay compared; NUL-padded labels still fail its
# rsmi_init (rx6900xt), so that repair stays.
[ -n "$oracle_root" ] && [ -n "$fix" ] && fix="$fix --skip-fix sleep --skip-fix in0"
# shellcheck disable=SC2086
if ! "$py" "$live_tree" "$capture" "$tmp/sys" $fix ${LIVE_TREE_ARGS:-} 2> "$tmp/tree.log"; then
    cat "$tmp/tree.log" >&2
    echo "run_rocm_smi.sh: live_tree.py failed on $capture" >&2
    exit 1
fi
cat "$tmp/tree.log" >> "$notes"
if ! grep -q '^CARD .* driver=amdgpu$' "$tmp/tree.log"; then
    skip "$capture has no amdgpu card ($(grep '^CARD' "$tmp/tree.log" | tr '\n' ' ')); rocm-smi ignores it"
fi

# Flags.  -a (--showallinfo) turns on everything below in ALL_FLAGS; EXTRA adds
# fields that -a leaves out.  --showmeminfo takes a list, so it goes last.
ALL_FLAGS=(-i -v --showdriverversion "--showfwinfo all" --showmclkrange --showmemvendor
           --showsclkrange --showproductname --showserial --showuniqueid --showvoltagerange
           --showbus --showpagesinfo -f -P -t -u --showenergycounter --showmemuse --showvoltage
           -c -M -m -o -p --showpids --showpidgpus --showreplaycount --showvc)
EXTRA=(-g -b --showtopo --showxgmierr "--showrasinfo all" "--showmeminfo vram gtt vis_vram")

# The part that runs inside the mount namespace.  $1 tree, $2 work dir, $3 timeout,
# $4 python ("-": run rocm-smi itself), $5 rocm-smi, $6 the oracle's root ("" for the host's), $7 "partial" to run every flag
# alone, rest: flag groups.
cat > "$tmp/inner.sh" <<'EOF'
set -u
tree=$1 work=$2 tmo=$3 py=$4 smi=$5 root=$6 mode=$7; shift 7
mkdir -p "$root/dev/shm" 2>/dev/null
mount --bind "$tree" "$root/sys" || { echo "bind mount over $root/sys failed" > "$work/mount.err"; exit 90; }
mount -t tmpfs -o size=16m,mode=1777 tmpfs "$root/dev/shm" || { echo "tmpfs on $root/dev/shm failed" > "$work/mount.err"; exit 91; }
if [ -n "$root" ]; then
    mount -t proc proc "$root/proc" || { echo "proc on $root/proc failed" > "$work/mount.err"; exit 90; }
    # An oracle's root holds pci.ids when its packages bring it (the current track's do): rocm-smi then
    # prints names from it instead of the ids it read ('Card Vendor'), which says nothing about the
    # capture. Hidden here, as in a root without it, so the ids are compared.
    # Only regular files: a link would be followed from outside the root (its target is hidden too
    # when it is the other path).
    for ids in "$root/usr/share/misc/pci.ids" "$root/usr/share/hwdata/pci.ids"; do
        [ -f "$ids" ] && [ ! -L "$ids" ] && { mount --bind /dev/null "$ids" || { echo "hiding $ids failed" > "$work/mount.err"; exit 90; }; }
    done
    in_root=(chroot "$root")
else
    in_root=()
fi
n=0
run() {   # run NAME ARGS... ; rc in NAME.rc
    local name=$1; shift
    # a rocm-smi that aborted leaves its (locked) mutex in /dev/shm and every
    # later rsmi_init then fails with status 8: start each call from an empty one
    # (it is this namespace's own tmpfs)
    rm -rf "$root/dev/shm/"* 2>/dev/null
    local interp=("$py")
    [ "$py" = - ] && interp=()
    timeout -k 5 "$tmo" "${in_root[@]}" "${interp[@]}" "$smi" "$@" > "$work/$name.out" 2> "$work/$name.err" < /dev/null
    echo $? > "$work/$name.rc"
}
if [ "$mode" = all ]; then
    # shellcheck disable=SC2086
    run all -a --json $*
    run clkfrq -s
else
    for f in "$@"; do
        n=$((n + 1))
        echo "$f" > "$work/f$n.flags"
        # shellcheck disable=SC2086
        run "f$n" --json $f
        rc=$(cat "$work/f$n.rc")
        [ "$rc" = 124 ] || [ "$rc" = 137 ] && break   # a hang: stop, do not wait 60 s per flag
    done
fi
exit 0
EOF

ns_run() {  # ns_run MODE FLAGS...
    timeout -k 5 $((timeout_s * 2 + 60)) \
        unshare -m --propagation private /bin/bash "$tmp/inner.sh" "$tmp/sys" "$tmp" "$timeout_s" "$smi_py" "$smi" "$oracle_root" "$@" \
        2>> "$tmp/inner.err"   # bash job messages ("Aborted ...")
    local rc=$?
    if [ $rc = 124 ] || [ $rc = 137 ]; then
        echo "run_rocm_smi.sh: rocm-smi runs went past the overall limit of $((timeout_s * 2 + 60))s" >&2
        exit 4
    fi
    if [ $rc -ne 0 ]; then
        echo "run_rocm_smi.sh: mount namespace setup failed (rc $rc): $(cat "$tmp/mount.err" 2>/dev/null)" >&2
        [ $rc = 90 ] || [ $rc = 91 ] && skip "cannot mount inside the namespace"
        exit 1
    fi
}

crashed() {  # crashed NAME: the call died (a signal or a time-out; 6.x and later: an uncaught Python exception)
    local rc; rc=$(cat "$tmp/$1.rc" 2>/dev/null || echo 255)
    [ "$rc" -ge 124 ] || { [ "$rc" = 1 ] && grep -q '^Traceback' "$tmp/$1.err" 2>/dev/null; }
}

crash_msg() {  # crash_msg NAME -> one line saying why NAME.out has no JSON
    local rc; rc=$(cat "$tmp/$1.rc" 2>/dev/null || echo '?')
    local why
    why=$(grep -E 'Assertion|Aborted|Segmentation|Exception|Error|error' "$tmp/$1.err" "$tmp/$1.out" 2>/dev/null \
          | grep -v DeprecationWarning | head -2 | sed 's/^[^:]*://' | tr '\n' ' ')
    case $rc in
        124|137) echo "timed out after ${timeout_s}s" ;;
        134) echo "aborted (SIGABRT, rc 134): ${why:-no message}" ;;
        1) echo "Python exception: $(grep -v '^ ' "$tmp/$1.err" 2>/dev/null | tail -1)" ;;
        139) echo "segfault (rc 139): ${why:-no message}" ;;
        *) echo "rc $rc: ${why:-no JSON printed}" ;;
    esac
}

merge() {  # merge OUT FILES... : JSON object from each rocm-smi stdout, merged per card
    "$py" - "$@" <<'EOF'
import json, sys, re
out, files = sys.argv[1], sys.argv[2:]
data = {}
for fn in files:
    try:
        text = open(fn, encoding="utf-8", errors="replace").read()
    except OSError:
        continue
    if fn.endswith("clkfrq.out"):
        # text mode of -s: "GPU[0]\t\t: Supported sclk frequencies on GPU0" then "GPU[0]\t\t: 0: 500Mhz *"
        clk = {}
        for line in text.splitlines():
            m = re.match(r"GPU\[(\d+)\]\s*:\s*(.*)$", line)
            if not m:
                continue
            dev, rest = m.group(1), m.group(2).strip()
            h = re.match(r"Supported (\S+) frequencies on GPU\d+$", rest)
            if h:
                clk[dev] = h.group(1)
                continue
            v = re.match(r"(\d+): (.+)$", rest)
            if v and dev in clk:
                data.setdefault("card" + dev, {})["Supported %s frequencies: %s" % (clk[dev], v.group(1))] = v.group(2).strip()
            elif not rest:
                clk.pop(dev, None)
        continue
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            for k, v in obj.items():
                if isinstance(v, dict):
                    data.setdefault(k, {}).update(v)
if not any(k.startswith("card") for k in data):
    sys.exit(1)
with open(out, "w") as f:
    json.dump(data, f, indent=1, sort_keys=True)
    f.write("\n")
EOF
}

ns_run all "${EXTRA[@]}"
rc_all=$(cat "$tmp/all.rc")
echo "RUN rocm-smi -a --json ${EXTRA[*]} rc=$rc_all" >> "$notes"
echo "RUN rocm-smi -s rc=$(cat "$tmp/clkfrq.rc")" >> "$notes"
status=0
if [ "$rc_all" = 124 ] || [ "$rc_all" = 137 ]; then
    echo "run_rocm_smi.sh: rocm-smi -a --json timed out after ${timeout_s}s on $capture" >&2
    echo "HANG rocm-smi -a --json" >> "$notes"
    exit 4
fi
if ! crashed all; then
    if ! merge "$out_json" "$tmp/all.out" "$tmp/clkfrq.out"; then
        echo "run_rocm_smi.sh: rocm-smi read no card from $capture (rc $rc_all): $(crash_msg all)" >&2
        echo "NOCARD rc=$rc_all: $(crash_msg all)" >> "$notes"
        exit 2
    fi
else
    msg=$(crash_msg all)
    echo "run_rocm_smi.sh: rocm-smi -a --json crashed on $capture: $msg" >&2
    echo "CRASH -a: $msg" >> "$notes"
    echo "run_rocm_smi.sh: running each flag alone to find the crashing one(s)..." >&2
    ns_run partial "${ALL_FLAGS[@]}" "${EXTRA[@]}"
    outs=()
    crashed=()
    i=1
    while [ -f "$tmp/f$i.rc" ]; do
        rc=$(cat "$tmp/f$i.rc"); flags=$(cat "$tmp/f$i.flags")
        echo "RUN rocm-smi --json $flags rc=$rc" >> "$notes"
        if crashed "f$i"; then
            msg=$(crash_msg "f$i")
            crashed+=("$flags")
            echo "run_rocm_smi.sh:   rocm-smi --json $flags: $msg" >&2
            echo "CRASH $flags: $msg" >> "$notes"
            if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
                echo "run_rocm_smi.sh: rocm-smi hangs on $flags; giving up" >&2
                exit 4
            fi
        else
            outs+=("$tmp/f$i.out")
        fi
        i=$((i + 1))
    done
    crashed clkfrq || outs+=("$tmp/clkfrq.out")
    if [ ${#outs[@]} -eq 0 ] || ! merge "$out_json" "${outs[@]}"; then
        echo "run_rocm_smi.sh: rocm-smi printed no device data for $capture" >&2
        exit 2
    fi
    echo "run_rocm_smi.sh: rocm-smi crashed on ${#crashed[@]} flag(s) (${crashed[*]}); $out_json holds what the other flags printed" >&2
    [ $allow_partial = 1 ] || status=3
fi
if ! grep -q '"card' "$out_json" 2>/dev/null; then
    echo "run_rocm_smi.sh: rocm-smi reported no card for $capture: $(grep -hv Deprecation "$tmp/all.err" | head -3 | tr '\n' ' ')" >&2
    exit 2
fi
exit $status
