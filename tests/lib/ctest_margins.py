#!/usr/bin/env python3
"""How close each test came to its timeout, and how long each CI step took (docs/testing.md, "Margins").

scripts/test.sh ends with this report, on success and on failure, so a shrinking margin is seen
before it turns into a timeout. A test's share is its time over its ctest TIMEOUT; the suite's rule
is at most 40 % in the slowest configuration (ASan + UBSan, two cores, one kept busy), so shares
above that are marked. A test registered without a TIMEOUT has no margin to measure: it is named
(and `check` fails on it), since ctest would wait for it forever.

    ctest_margins.py report --steps STEPS_TSV [--run STEP:BUILD_DIR:JUNIT ...] [--top N]
    ctest_margins.py check --build-dir DIR [--build-dir DIR ...]

STEPS_TSV: one line per step, `NAME<TAB>SECONDS<TAB>RESULT` (scripts/test.sh writes it).
--run: a ctest run of that step: the build folder it ran in (for the timeouts) and its JUnit report.

Exit status: report 0 (it only reports; unreadable input is said in the report), check 0 when every
test has a timeout, 1 when one has none, 2 bad arguments or unreadable input.
"""
import argparse
import sys

from ctest_required import InputError, ctest_properties, read_junit

SHARE_LIMIT = 0.40  # docs/testing.md, "Margins"


def ctest_timeouts(build_dir):
    """name -> TIMEOUT in seconds (None when the test has none) of every test build_dir registers."""
    timeouts = {}
    for name, props in ctest_properties(build_dir).items():
        try:
            timeouts[name] = float(props["TIMEOUT"]) if "TIMEOUT" in props else None
        except (TypeError, ValueError):
            raise InputError(f"{build_dir}: test {name} has a TIMEOUT that is not a number: {props['TIMEOUT']!r}")
    return timeouts


def read_steps(path):
    steps = []
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        raise InputError(f"cannot read the step times {path}: {e}")
    for number, line in enumerate(lines, 1):
        fields = line.split("\t")
        if len(fields) != 3:
            raise InputError(f"{path}:{number}: expected NAME<TAB>SECONDS<TAB>RESULT: {line!r}")
        try:
            steps.append((fields[0], int(fields[1]), fields[2]))
        except ValueError:
            raise InputError(f"{path}:{number}: seconds are not a whole number: {fields[1]!r}")
    return steps


def parse_run(text):
    parts = text.split(":")
    if len(parts) != 3 or not all(parts):
        raise argparse.ArgumentTypeError(f"expected STEP:BUILD_DIR:JUNIT, not {text!r}")
    return tuple(parts)


def margins(runs):
    """Rows (share or None, step, name, seconds, timeout) of every test the runs' reports hold."""
    rows = []
    for step, build_dir, junit in runs:
        results = read_junit(junit)
        timeouts = ctest_timeouts(build_dir)
        for name, (status, _, _, seconds) in results.items():
            if status in ("notrun", "disabled"):
                continue
            timeout = timeouts.get(name)
            share = seconds / timeout if timeout else None
            rows.append((share, step, name, seconds, timeout))
    return rows


def report(args):
    out = []
    try:
        steps = read_steps(args.steps)
    except InputError as e:
        steps = []
        out.append(f"(step times: {e})")
    if steps:
        out.append("step                          seconds  result")
        for name, seconds, result in steps:
            out.append(f"{name:<28} {seconds:>8}  {result}")
        out.append(f"{'total':<28} {sum(s for _, s, _ in steps):>8}")
    try:
        rows = margins(args.run)
    except InputError as e:
        rows = []
        out.append(f"(test margins: {e})")
    # Tests without a timeout first (no margin at all), then by share, largest first.
    rows.sort(key=lambda r: (r[0] is not None, -(r[0] or 0), r[1], r[2]))
    if rows:
        out.append("")
        out.append(f"the {min(args.top, len(rows))} tests closest to their timeout "
                   f"(at most {SHARE_LIMIT * 100:.0f} % of it: docs/testing.md, \"Margins\"):")
        out.append(f"{'step':<12} {'test':<40} {'seconds':>8} {'timeout':>8} {'share':>6}")
        for share, step, name, seconds, timeout in rows[:args.top]:
            shown = f"{share:.0%}" if share is not None else "none"
            mark = ("  <- no timeout" if share is None else
                    f"  <- over {SHARE_LIMIT * 100:.0f} %" if share > SHARE_LIMIT else "")
            timeout_text = f"{timeout:.0f}" if timeout else "-"
            out.append(f"{step:<12} {name:<40} {seconds:>8.1f} {timeout_text:>8} {shown:>6}{mark}")
    print("\n".join(out))
    return 0


def check(args):
    missing = []
    for build_dir in args.build_dir:
        for name, timeout in sorted(ctest_timeouts(build_dir).items()):
            if not timeout:
                missing.append(f"{build_dir}: {name} has no TIMEOUT (set_tests_properties(... TIMEOUT N))")
    for line in missing:
        print(line, file=sys.stderr)
    return 1 if missing else 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report")
    rep.add_argument("--steps", required=True)
    rep.add_argument("--run", type=parse_run, action="append", default=[])
    rep.add_argument("--top", type=int, default=10)
    chk = sub.add_parser("check")
    chk.add_argument("--build-dir", action="append", required=True)
    args = parser.parse_args(argv)
    try:
        return report(args) if args.command == "report" else check(args)
    except InputError as e:
        print(f"ctest_margins.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
