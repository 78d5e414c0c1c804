#!/usr/bin/env python3
"""CI must fail when a test it is meant to run did not run (docs/testing.md, "Required tests").

check: after `ctest --output-junit JUNIT [-L REGEX] [-LE REGEX]` in BUILD_DIR, every test of the
required list (tests/ci-required-tests.txt) that this label selection includes must be registered in
BUILD_DIR and have run and passed. A test skipped (exit 77, a failed fixture, a missing program),
disabled, absent from ctest's report or not registered at all fails, named with ctest's reason and
the tail of its output; so does a test program that passed but skipped some of its cases (gtest's
GTEST_SKIP and Python's skipTest exit 0: their summaries in the output give them away, which is why
ctest must keep the tail of a passed test's output: `ctest $(ctest_required.py ctest-args)`). The list must also be complete: a test BUILD_DIR registers without the label
`gpu` or `long` that the list lacks, or whose labels differ from the list's, fails too.

    ctest_required.py check --required FILE --build-dir DIR --junit FILE [-L REGEX] [-LE REGEX]

regenerate: write the list from what the given build folders register (a normal packaging build and
a fuzz build; scripts/test.sh configures both), leaving out the labels `gpu` and `long`.

    ctest_required.py regenerate --required FILE --build-dir build-ci --build-dir build-fuzz

ctest-args: the ctest arguments the check needs (one per line): keep the last 64 KiB of each passed
test's output, where the skip summaries are (ctest keeps the first 1 KiB by default).

Exit status: 0 all required tests of the selection passed, 1 one or more did not (or the list is
stale), 2 bad arguments or unreadable input.
"""
import argparse
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

EXEMPT_LABELS = {"gpu", "long"}  # need a GPU machine or run by hand: never required of CI
CTEST_ARGS = ["--test-output-size-passed", "65536", "--test-output-truncation", "head"]
# Cases skipped inside a test program that exits 0: gtest's "[  SKIPPED ] Suite.Case" lines and
# Python unittest's closing "OK (skipped=N)".
INNER_SKIP = re.compile(r"^\[  SKIPPED \] .*$|^(?:OK|FAILED) \(.*\bskipped=\d+.*$", re.M)
TAIL_LINES = 15

HEADER = """\
# The tests CI must run and see pass (docs/testing.md, "Required tests"): one ctest name per line,
# then its ctest labels (separated by ';', or '-' for none). scripts/test.sh checks, after each ctest
# run, that every test of this list which that run's label selection includes was registered, ran
# and passed (tests/lib/ctest_required.py). Everything ctest registers belongs here except the tests
# labelled `gpu` (they need a GPU machine) and `long` (run by hand). Regenerate after adding,
# removing or relabelling a test, from a packaging build and a fuzz build:
#   cmake -S . -B build-ci -G Ninja -DHIPSTACK_PACKAGING=ON
#   CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DHIPSTACK_FUZZ=ON \\
#         -DHIPSTACK_SANITIZE=address,undefined -DHIPSTACK_BUILD_VALIDATION=OFF
#   tests/lib/ctest_required.py regenerate --required tests/ci-required-tests.txt \\
#         --build-dir build-ci --build-dir build-fuzz
"""


class InputError(Exception):
    pass


def read_required(path):
    """name -> tuple of labels, in file order."""
    required = {}
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        raise InputError(f"cannot read the required list: {e}")
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) != 2:
            raise InputError(f"{path}:{number}: expected 'NAME LABELS' (LABELS ';'-separated or '-'): {line!r}")
        name, labels = fields
        if name in required:
            raise InputError(f"{path}:{number}: {name} is listed twice")
        required[name] = tuple(sorted(l for l in labels.split(";") if l and labels != "-"))
    return required


def ctest_properties(build_dir, selection=()):
    """name -> {property: value} of the tests ctest registers in build_dir (with -L/-LE when given).
    Also used by ctest_margins.py (the TIMEOUTs)."""
    cmd = ["ctest", "--test-dir", build_dir, "-N", "--show-only=json-v1", *selection]
    try:
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        return {test["name"]: {prop["name"]: prop["value"] for prop in test.get("properties", [])}
                for test in json.loads(out)["tests"]}
    except (OSError, subprocess.CalledProcessError, ValueError, KeyError, TypeError) as e:
        detail = getattr(e, "stderr", "") or ""
        raise InputError(f"`{' '.join(cmd)}` failed: {e} {detail.strip()}")


def ctest_registered(build_dir, selection=()):
    """name -> labels of the tests ctest registers in build_dir (with -L/-LE when given)."""
    return {name: tuple(sorted(props.get("LABELS", ()))) for name, props in ctest_properties(build_dir, selection).items()}


def selected(labels, include, exclude):
    """ctest's label selection: -L keeps a test with a label matching it, -LE drops one."""
    if include is not None and not any(re.search(include, l) for l in labels):
        return False
    if exclude is not None and any(re.search(exclude, l) for l in labels):
        return False
    return True


def read_junit(path):
    """name -> (status, message, output, seconds) from ctest's --output-junit file (ctest_margins.py
    reads the seconds)."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise InputError(f"cannot read ctest's JUnit report {path}: {e}")
    results = {}
    for case in root.iter("testcase"):
        message = ""
        for tag in ("skipped", "failure", "error"):
            element = case.find(tag)
            if element is not None:
                message = element.get("message", "")
        out = case.findtext("system-out") or ""
        try:
            seconds = float(case.get("time", "0"))
        except ValueError:
            raise InputError(f"{path}: test {case.get('name')!r} has a time that is not a number: {case.get('time')!r}")
        results[case.get("name")] = (case.get("status", ""), message, out, seconds)
    return results


def tail(text):
    lines = text.rstrip().splitlines()[-TAIL_LINES:]
    return "\n".join("      | " + l for l in lines) if lines else "      | (no output)"


def check(args):
    required = read_required(args.required)
    selection = []
    if args.L is not None:
        selection += ["-L", args.L]
    if args.LE is not None:
        selection += ["-LE", args.LE]
    registered = ctest_registered(args.build_dir)
    chosen = ctest_registered(args.build_dir, selection)
    problems = []
    # The list itself: complete, and with the labels the build gives each test.
    for name, labels in sorted(registered.items()):
        if EXEMPT_LABELS & set(labels):
            continue
        if name not in required:
            problems.append(f"{name}: registered (labels {';'.join(labels) or '-'}) but not in {args.required};"
                            " add it (see the file's header to regenerate)")
        elif required[name] != labels:
            problems.append(f"{name}: labels {';'.join(labels) or '-'} in the build but "
                            f"{';'.join(required[name]) or '-'} in {args.required}; regenerate the list")
    # Our reading of -L/-LE must be ctest's own, or the absent tests below would be judged wrongly.
    for name, labels in registered.items():
        if (name in chosen) != selected(labels, args.L, args.LE):
            raise InputError(f"{name} (labels {labels}): ctest's selection and this checker's disagree")
    results = read_junit(args.junit)
    checked = 0
    for name, labels in required.items():
        if not selected(labels, args.L, args.LE):
            continue
        checked += 1
        if name not in registered:
            problems.append(f"{name}: required but not registered in {args.build_dir} (a component missing at"
                            " configure time, or the test was removed without updating the list)")
            continue
        if name not in results:
            problems.append(f"{name}: required but absent from ctest's report {args.junit} (not run)")
            continue
        status, message, out, _ = results[name]
        if status == "run":
            inner = INNER_SKIP.search(out)
            if inner:
                problems.append(f"{name}: required but some of its cases were skipped ({inner.group(0).strip()}); output:\n" + tail(out))
            continue
        what = {"notrun": "skipped", "disabled": "disabled", "fail": "failed"}.get(status, f"status {status!r}")
        problems.append(f"{name}: required but {what}" + (f" ({message})" if message else "") + "; output:\n" + tail(out))
    step = " ".join(selection) or "(all labels)"
    if problems:
        print(f"ctest_required: {len(problems)} problem(s) with the required tests of `ctest {step}` in "
              f"{args.build_dir}:", file=sys.stderr)
        for p in problems:
            print("  - " + p, file=sys.stderr)
        return 1
    print(f"ctest_required: all {checked} required tests of `ctest {step}` in {args.build_dir} ran and passed")
    return 0


def regenerate(args):
    merged = {}
    for build_dir in args.build_dir:
        for name, labels in ctest_registered(build_dir).items():
            if EXEMPT_LABELS & set(labels):
                continue
            if name in merged and merged[name] != labels:
                raise InputError(f"{name}: labels differ between the build folders ({merged[name]} and {labels})")
            merged[name] = labels
    width = max(len(n) for n in merged)
    with open(args.required, "w", encoding="utf-8") as f:
        f.write(HEADER)
        for name in sorted(merged):
            f.write(f"{name:<{width}} {';'.join(merged[name]) or '-'}\n")
    print(f"ctest_required: wrote {len(merged)} tests to {args.required}")
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check")
    c.add_argument("--required", required=True)
    c.add_argument("--build-dir", required=True)
    c.add_argument("--junit", required=True)
    c.add_argument("-L", help="the -L regex given to ctest")
    c.add_argument("-LE", help="the -LE regex given to ctest")
    r = sub.add_parser("regenerate")
    r.add_argument("--required", required=True)
    r.add_argument("--build-dir", action="append", required=True)
    sub.add_parser("ctest-args")
    args = parser.parse_args(argv)
    if args.command == "ctest-args":
        print("\n".join(CTEST_ARGS))
        return 0
    try:
        return check(args) if args.command == "check" else regenerate(args)
    except InputError as e:
        print(f"ctest_required: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
