#!/usr/bin/env python3
"""The human views of hipstack-smi as a person sees them, on the bundled captures (issue 15).

Usage: test_golden.py HIPSTACK_SMI CAPTURES_DIR GOLDEN_DIR

Each view's output is compared with GOLDEN_DIR/<capture>.<view>.txt, byte for byte, after what differs
from run to run is replaced: the UTC time of the default view's header, monitor's clock column and
the capture's path. A change to a view shows up as a diff here; after a deliberate one, rerun with
HIPSTACK_GOLDEN_UPDATE=1 to rewrite the files and review them in the commit.
"""
import difflib
import os
import re
import subprocess
import sys
import unittest

SMI = CAPTURES = GOLDEN = None
NODES = ("mi300x-8gpu-spx-nps1", "mi300x-8gpu-cpx-nps1", "mi300x-8gpu-faults")
VIEWS = {
    "default": [],
    "query": ["query", "-m", "index,bdf,vram_used,vram_total,power_current,temperature_junction,gpu_busy"],
    "nvidia-smi": ["--nvidia-smi", "--query-gpu=index,name,memory.used,memory.total,temperature.gpu,power.draw,"
                   "utilization.gpu", "--format=csv"],
    "topology": ["topology"],
    "monitor": ["monitor", "-i", "1"],
    "metric-gpu0": ["metric", "-g", "0"],
}


def normalise(text, root):
    text = text.replace(root, "CAPTURE")
    text = re.sub(r"^\d\d:\d\d:\d\d ", "HH:MM:SS ", text, flags=re.MULTILINE)  # monitor's time column
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", "YYYY-MM-DD HH:MM:SS UTC", text)


class Golden(unittest.TestCase):
    def test_views(self):
        update = os.environ.get("HIPSTACK_GOLDEN_UPDATE") == "1"
        for node in NODES:
            # Relative to the captures' parent: paths in the output (a wrapped detail cannot be
            # replaced by normalise) read the same in every checkout.
            root = os.path.join(os.path.basename(CAPTURES), "constructed", node, "sys")
            for view, args in VIEWS.items():
                with self.subTest(node=node, view=view):
                    proc = subprocess.run([SMI, "--sysfs-root", root, *args] if args[:1] != ["--nvidia-smi"]
                                          else [SMI, *args, "--sysfs-root", root],
                                          capture_output=True, text=True, timeout=60, env=dict(os.environ, NO_COLOR="1"),
                                          cwd=os.path.dirname(CAPTURES))
                    self.assertEqual(proc.returncode, 0, proc.stderr)
                    got = normalise(proc.stdout, root)
                    path = os.path.join(GOLDEN, f"{node}.{view}.txt")
                    if update:
                        with open(path, "w") as f:
                            f.write(got)
                        continue
                    with open(path) as f:
                        want = f.read()
                    if got != want:
                        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), path, "now"))
                        self.fail(f"{node} {view} differs from {path}:\n{diff}")


def main():
    global SMI, CAPTURES, GOLDEN
    SMI, CAPTURES, GOLDEN = (os.path.abspath(a) for a in sys.argv[1:4])
    unittest.main(argv=[sys.argv[0]] + sys.argv[4:], verbosity=2)


if __name__ == "__main__":
    main()
