#!/usr/bin/env python3
"""Man pages and shell completions (issue 15, item 8), as a person meets them.

For each program: the built man page (the file the packages install) is what `PROGRAM --generate-docs
man` prints now (never stale) and `man -l` renders it without a warning, naming every option and
command that --help names. The bash completion is sourced in a real bash and asked for candidates in
each command's context: every option --help lists must be offered. fish is asked with `complete -C`.
zsh runs its completion for real in a terminal (tmux): a typed prefix is completed on the line.

Usage: test_docs.py CAPTURES PROGRAM:DOCDIR:SECTION ...
"""
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

PROGRAMS = []  # (path, docdir, section)
CAPTURES = ""


def name_of(program):
    return os.path.basename(program)


def read(path):
    with open(path) as f:
        return f.read()


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, timeout=60, **kwargs)


def help_section(text, title):
    """The lines of one section of a --help text ("Options:", "Subcommands:")."""
    lines, section = [], None
    for line in text.splitlines():
        if re.match(r"^\S.*:$", line):
            section = line
        elif section == title:
            lines.append(line)
    return lines


def help_options(text):
    """The option spellings a --help text lists ("  -g,--gpu TEXT  ..." -> -g, --gpu)."""
    out = []
    for line in help_section(text, "Options:"):
        match = re.match(r"^  (-[^ ]+)", line)
        if match:
            out += [s for s in match.group(1).split(",") if s.startswith("-")]
    return out


def help_commands(text):
    return [m.group(1) for m in (re.match(r"^  ([a-z][a-z-]*)\s", line) for line in help_section(text, "Subcommands:")) if m]


def contexts(program):
    """(command or "", options its --help lists) for the program and each of its commands."""
    top = run([program, "--help"]).stdout
    result = [("", help_options(top))]
    for command in help_commands(top):
        result.append((command, help_options(run([program, command, "--help"]).stdout)))
    # Every context lists at least -h/--help: an empty list would mean --help was not understood,
    # and the checks over it would pass on nothing.
    for command, options in result:
        assert {"-h", "--help"} <= set(options), (program, command, options)
    if name_of(program) == "hipstack-smi":
        assert len(result) > 15 and len(result[0][1]) > 15, result
    return result


class ManPages(unittest.TestCase):
    def test_each_page_is_current_and_renders_every_option(self):
        for program, docdir, section in PROGRAMS:
            with self.subTest(program=name_of(program)):
                page = os.path.join(docdir, f"{name_of(program)}.{section}.gz")
                with gzip.open(page, "rt") as f:
                    built = f.read()
                self.assertEqual(built, run([program, "--generate-docs", "man"]).stdout, "the built page is stale")
                env = dict(os.environ, MANWIDTH="200", MAN_KEEP_FORMATTING="", LC_ALL="C.UTF-8")
                shown = run(["man", "--warnings", "-l", page], env=env)
                self.assertEqual(shown.returncode, 0, shown.stderr)
                self.assertEqual(shown.stderr, "", "groff warnings")
                text = shown.stdout
                self.assertIn(f"{name_of(program)} - ", text)  # NAME
                for heading in ("SYNOPSIS", "OPTIONS", "EXIT STATUS", "SEE ALSO"):
                    self.assertRegex(text, rf"(?m)^{heading}$")
                for command, options in contexts(program):
                    if command:
                        self.assertRegex(text, rf"(?m)^   {re.escape(command)}$", "a command without its section")
                    for option in options:
                        listed = re.search(rf"(?m)^       {re.escape(option)}\b|, {re.escape(option)}\b", text)
                        self.assertTrue(listed, f"{command or 'program'}: {option} not in the page")

    def test_hipstack_smi_page_carries_the_examples_and_exit_codes(self):
        program = next(p for p in PROGRAMS if name_of(p[0]) == "hipstack-smi")
        text = run(["man", "-l", os.path.join(program[1], "hipstack-smi.1.gz")],
                   env=dict(os.environ, MANWIDTH="200", LC_ALL="C.UTF-8")).stdout
        self.assertIn("hipstack-smi query -m index,name,vram_used,vram_total,power_current", text)
        self.assertRegex(text, r"(?m)^       3\s+no such device")
        # Every exit code of docs/cli.md's "Exit codes" table is in the page's EXIT STATUS.
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../docs/cli.md")) as f:
            table = f.read().split("\n## Exit codes")[1].split("\n## ")[0]
        documented = re.findall(r"(?m)^\| (\d+) \| ", table)
        self.assertGreaterEqual(len(documented), 10, documented)
        for code in documented:
            self.assertRegex(text, rf"(?m)^       {code}\s+\S", f"exit code {code} is not in the man page")

    def test_bad_kind_is_refused(self):
        for program, _, _ in PROGRAMS:
            proc = run([program, "--generate-docs", "html"])
            self.assertEqual(proc.returncode, 2, name_of(program))
            self.assertIn("not one of man, bash, zsh, fish", proc.stderr)
            self.assertEqual(proc.stdout, "")


def bash_candidates(script, words):
    """Candidates the bash completion offers for the command line WORDS (the last one being typed)."""
    line = " ".join(f"'{w}'" for w in words)
    probe = (f"source '{script}'\ncomplete -p {words[0]}\nCOMP_WORDS=({line})\nCOMP_CWORD={len(words) - 1}\n"
             f"COMPREPLY=()\n$(complete -p {words[0]} | sed -E 's/.* -F ([^ ]+) .*/\\1/') {words[0]}\n"
             "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    proc = run(["bash", "--norc", "--noprofile", "-c", probe])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines and lines[0].startswith("complete -F "), lines
    return lines[1:]


class Bash(unittest.TestCase):
    def test_every_option_and_command_is_offered(self):
        for program, docdir, _ in PROGRAMS:
            script = os.path.join(docdir, "bash", name_of(program))
            self.assertEqual(read(script), run([program, "--generate-docs", "bash"]).stdout, "stale")
            all_contexts = contexts(program)
            globals_ = all_contexts[0][1]
            for command, options in all_contexts:
                with self.subTest(program=name_of(program), command=command):
                    words = [name_of(program)] + ([command] if command else []) + [""]
                    offered = set(bash_candidates(script, words))
                    for option in options + globals_:
                        self.assertIn(option, offered, f"{option} has no completion")
                    if not command:
                        for other, _ in all_contexts[1:]:
                            self.assertIn(other, offered)

    def test_values(self):
        program, docdir, _ = next(p for p in PROGRAMS if name_of(p[0]) == "hipstack-smi")
        script = os.path.join(docdir, "bash", "hipstack-smi")
        self.assertIn("temperature_hbm", bash_candidates(script, ["hipstack-smi", "-m", "temperature_h"]))
        self.assertIn("power,clock_sclk", bash_candidates(script, ["hipstack-smi", "metric", "-m", "power,clock_s"]))
        self.assertEqual(bash_candidates(script, ["hipstack-smi", "--metrics", "=", "temperature_hb"]), ["temperature_hbm"])
        self.assertIn("CPX", bash_candidates(script, ["hipstack-smi", "partition", "--compute-mode", ""]))
        with tempfile.TemporaryDirectory() as folder:
            os.mkdir(os.path.join(folder, "capture-a"))
            open(os.path.join(folder, "capture-b"), "w").close()
            offered = bash_candidates(script, ["hipstack-smi", "--sysfs-root", folder + "/capture-"])
            self.assertEqual(offered, [folder + "/capture-a"])  # folders only
        # The value of an option is not taken for the command: -g list is a GPU named "list".
        offered = bash_candidates(script, ["hipstack-smi", "-g", "list", "--"])
        self.assertNotIn("--pcie-bw", offered)
        self.assertIn("--json", offered)


def fish_candidates(script, line):
    proc = run(["fish", "--no-config", "-c", f"source '{script}'; complete -C '{line}'"])
    assert proc.returncode == 0, proc.stderr
    return [entry.split("\t")[0] for entry in proc.stdout.splitlines()]


class Fish(unittest.TestCase):
    def test_every_option_and_command_is_offered(self):
        for program, docdir, _ in PROGRAMS:
            script = os.path.join(docdir, "fish", name_of(program) + ".fish")
            self.assertEqual(read(script), run([program, "--generate-docs", "fish"]).stdout, "stale")
            all_contexts = contexts(program)
            for command, options in all_contexts:
                with self.subTest(program=name_of(program), command=command):
                    prefix = f"{name_of(program)} {command} " if command else f"{name_of(program)} "
                    offered = set(fish_candidates(script, prefix + "-"))
                    for option in options + all_contexts[0][1]:
                        if option.startswith("--"):
                            self.assertIn(option, offered, f"{option} has no completion")
                        else:
                            # fish offers short options only once "-" has been typed alone.
                            self.assertIn(option, offered | set(fish_candidates(script, prefix + option)))
            if len(all_contexts) > 1:
                offered = set(fish_candidates(script, f"{name_of(program)} "))
                self.assertEqual(offered, {c for c, _ in all_contexts[1:]})

    def test_values(self):
        program, docdir, _ = next(p for p in PROGRAMS if name_of(p[0]) == "hipstack-validate")
        script = os.path.join(docdir, "fish", "hipstack-validate.fish")
        self.assertEqual(fish_candidates(script, "hipstack-validate -t mem"), ["memtest"])


class Zsh(unittest.TestCase):
    """zsh completes only inside its line editor: each case types a prefix and TAB into a real zsh in
    tmux and reads the completed line back."""

    def setUp(self):
        self.fpath = tempfile.mkdtemp(prefix="zsh-fpath-")
        self.addCleanup(shutil.rmtree, self.fpath, True)
        for program, docdir, _ in PROGRAMS:
            shutil.copy(os.path.join(docdir, "zsh", "_" + name_of(program)), self.fpath)
        self.socket = os.path.join(self.fpath, "tmux.sock")
        self.tmux = ["tmux", "-S", self.socket, "-f", "/dev/null"]
        env = dict(os.environ, ZDOTDIR=self.fpath, TERM="xterm")
        with open(os.path.join(self.fpath, ".zshrc"), "w") as rc:
            rc.write(f"PS1='%% '\nfpath=({self.fpath} $fpath)\nautoload -Uz compinit\ncompinit -u -D\n")
        subprocess.run(self.tmux + ["new-session", "-d", "-x", "200", "-y", "20", "zsh"], check=True, env=env, timeout=30)
        self.addCleanup(subprocess.run, self.tmux + ["kill-server"], timeout=30)

    def screen(self):
        return run(self.tmux + ["capture-pane", "-p"]).stdout

    def wait_for(self, predicate, what):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            text = self.screen()
            if predicate(text):
                return text
            time.sleep(0.05)  # polling the terminal until it shows the answer, not a fixed wait
        self.fail(f"{what}; the screen:\n{self.screen()}")

    def complete(self, typed, expected):
        self.wait_for(lambda t: t.rstrip().endswith("%"), "no prompt")
        subprocess.run(self.tmux + ["send-keys", "-l", typed], check=True, timeout=30)
        subprocess.run(self.tmux + ["send-keys", "Tab"], check=True, timeout=30)
        self.wait_for(lambda t: ("% " + expected.rstrip()) in t, f"{typed!r} + TAB did not become {expected!r}")
        # The terminal drops trailing blanks: a marker typed after the completion shows the space.
        subprocess.run(self.tmux + ["send-keys", "-l", "@"], check=True, timeout=30)
        self.wait_for(lambda t: ("% " + expected + "@") in t, f"{typed!r} + TAB did not become {expected!r}")
        subprocess.run(self.tmux + ["send-keys", "C-u", "clear", "Enter"], check=True, timeout=30)

    def test_commands_options_and_values(self):
        for program, docdir, _ in PROGRAMS:
            text = read(os.path.join(docdir, "zsh", "_" + name_of(program)))
            self.assertEqual(text, run([program, "--generate-docs", "zsh"]).stdout, "stale")
            self.assertTrue(text.startswith(f"#compdef {name_of(program)}\n"))
            self.assertEqual(run(["zsh", "-n", os.path.join(docdir, "zsh", "_" + name_of(program))]).returncode, 0)
            for command, options in contexts(program):
                for option in options:
                    self.assertIn(f"'{option}[", text, f"{name_of(program)} {command}: {option} has no zsh spec")
        self.complete("hipstack-smi metr", "hipstack-smi metric ")
        self.complete("hipstack-smi metric --pcie", "hipstack-smi metric --pcie-bw ")
        self.complete("hipstack-smi -m temperature_hb", "hipstack-smi -m temperature_hbm,")  # a list: the next item follows
        self.complete("hipstack-smi partition --compute-mode CP", "hipstack-smi partition --compute-mode CPX ")
        self.complete("hipstack-validate --module-d", "hipstack-validate --module-dir ")
        self.complete("hipstack-smid --grpc-l", "hipstack-smid --grpc-listen ")
        self.complete("hipstack-info --no-ch", "hipstack-info --no-checks ")


def main():
    global CAPTURES
    CAPTURES = sys.argv[1]
    args = sys.argv[2:]
    while args and ":" in args[0]:
        program, docdir, section = args.pop(0).split(":")
        PROGRAMS.append((program, docdir, section))
    program = unittest.main(argv=[sys.argv[0]] + args, verbosity=2, exit=False)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
