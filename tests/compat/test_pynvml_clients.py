#!/usr/bin/python3
"""Debian's gpustat and nvitop, unchanged, on hipstack.pynvml (docs/python.md, "hipstack.pynvml"):
fetched from Debian sid's contrib with an apt configuration of their own and unpacked (never
installed), run with `import pynvml` resolved to hipstack.pynvml by the pynvml.py of
python3-hipstack-pynvml (smi-lib/python/pynvml_dropin), on the MI300X SPX and CPX captures and on the NVML double (an H200; two H100s, one in MIG mode). Each must
exit 0 with no traceback or "corrupted" warning and list every GPU with the figures
`hipstack-smi metric --json` / `static --json` give for it, in the client's own rounding.

Usage: test_pynvml_clients.py HIPSTACK_SMI PYTHON_PACKAGE_DIR CAPTURES_DIR CACHE_DIR
Environment: HIPSTACK_SMI_LIBRARY, FAKE_NVML_FULL, FAKE_NVML_SCRIPTS_DIR. Needs python3-psutil and
python3-blessed (the clients' dependencies) and Debian's archive.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SMI = PACKAGE = CAPTURES = CACHE = None
ROOT = SHIM = NVIDIA_PYNVML = None
MIB = 1 << 20


def setUpModule():
    global ROOT, SHIM, NVIDIA_PYNVML
    here = os.path.dirname(os.path.abspath(__file__))
    fetch = os.path.join(here, "fetch_debian_packages.sh")
    ROOT = subprocess.run([fetch, CACHE, "sid", "contrib", "gpustat", "nvitop"],
                          capture_output=True, text=True, check=True, timeout=600).stdout.strip()
    # NVIDIA's pynvml as Debian packages it, in a root of its own: the oracle of AgainstNvidiasPynvml.
    NVIDIA_PYNVML = subprocess.run([fetch, os.path.join(CACHE, "nvidia-pynvml"), "sid", "contrib", "python3-pynvml"],
                                   capture_output=True, text=True, check=True, timeout=600).stdout.strip()
    # The pynvml.py python3-hipstack-pynvml installs (docs/packaging.md, "Drop-ins").
    SHIM = os.path.join(PACKAGE, "pynvml_dropin")


class Clients(unittest.TestCase):
    def sources(self):
        """(name, environment) of each GPU set the clients are run on."""
        out = []
        for capture in ("constructed/mi300x-8gpu-spx-nps1", "constructed/mi300x-8gpu-cpx-nps1"):
            base = os.path.join(CAPTURES, capture)
            out.append((capture, {"HIPSTACK_SYSFS_ROOT": os.path.join(base, "sys"),
                                  "HIPSTACK_PROCFS_ROOT": os.path.join(base, "proc"),
                                  "HIPSTACK_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"}))
        empty = tempfile.mkdtemp(prefix="no-amd-")
        self.addCleanup(os.rmdir, empty)
        for script in ("h200.txt", "h100x2-mig.txt"):
            out.append((script, {"HIPSTACK_SYSFS_ROOT": empty, "HIPSTACK_NVML_LIBRARY": os.environ["FAKE_NVML_FULL"],
                                 "HIPSTACK_FAKE_NVML_SCRIPT": os.path.join(os.environ["FAKE_NVML_SCRIPTS_DIR"], script)}))
        return out

    def run_client(self, env_extra, *args):
        env = {k: v for k, v in os.environ.items() if not k.startswith("HIPSTACK_") or k == "HIPSTACK_SMI_LIBRARY"}
        env.update(env_extra, PYTHONPATH=":".join([SHIM, PACKAGE, os.path.join(ROOT, "usr/lib/python3/dist-packages")]),
                   COLUMNS="120", TERM="dumb")
        proc = subprocess.run(["/usr/bin/python3", "-m", *args], capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        for bad in ("Traceback", "corrupted", "FunctionNotFound"):
            self.assertNotIn(bad, proc.stderr)
        return proc.stdout

    def figures(self, env_extra):
        """Each GPU's readings as hipstack-smi reports them (identity, static and live)."""
        env = dict(os.environ, **env_extra)
        devices = []
        for command in ("metric", "static"):
            doc = json.loads(subprocess.run([SMI, command, "--json", "--direct"], capture_output=True, text=True,
                                            env=env, check=True, timeout=60).stdout)["devices"]
            for i, d in enumerate(doc):
                if len(devices) <= i:
                    devices.append(dict(d, values={}))
                for name, r in d["metrics"].items():
                    if r.get("status") == "ok":
                        devices[i]["values"][name] = r["value"]
        return devices

    def test_gpustat_json(self):
        for name, env in self.sources():
            with self.subTest(gpus=name):
                doc = json.loads(self.run_client(env, "gpustat", "--json"))
                gpus = self.figures(env)
                self.assertEqual(len(doc["gpus"]), len(gpus))
                for shown, gpu in zip(doc["gpus"], gpus):
                    v = gpu["values"]
                    self.assertEqual((shown["index"], shown["uuid"], shown["name"]), (gpu["index"], gpu["uuid"], gpu["name"]))
                    temperature = v.get("temperature_junction", v.get("temperature_edge"))
                    self.assertEqual(shown["temperature.gpu"], round(temperature))
                    self.assertEqual(shown["utilization.gpu"], round(v["gpu_busy"]) if "gpu_busy" in v else None)
                    power = v.get("power_average", v.get("power_current"))
                    self.assertEqual(shown["power.draw"], round(power * 1000) // 1000)
                    self.assertEqual(shown["enforced.power.limit"], round(v["power_cap"] * 1000) // 1000)
                    self.assertEqual(shown["memory.total"], v["vram_total"] // MIB)
                    if "vram_used" in v:
                        self.assertEqual(shown["memory.used"], v["vram_used"] // MIB)
                    self.assertNotEqual(shown["memory.used"], None)

    def test_nvitop_once(self):
        for name, env in self.sources():
            with self.subTest(gpus=name):
                screen = self.run_client(env, "nvitop", "--once")
                gpus = self.figures(env)
                for gpu in gpus:
                    v = gpu["values"]
                    bus = "0000" + gpu["bdf"].upper()
                    line = next((l for l in screen.splitlines() if bus in l), None)
                    self.assertIsNotNone(line, "GPU %s (%s) is not on nvitop's screen:\n%s" % (gpu["index"], bus, screen))
                    # The next line: fan, temperature, performance state, power use / cap.
                    after = screen.splitlines()[screen.splitlines().index(line) + 1]
                    temperature = v.get("temperature_junction", v.get("temperature_edge"))
                    self.assertIn("%dC" % round(temperature), after)
                    power = v.get("power_average", v.get("power_current"))
                    self.assertRegex(after, r"\b%dW / %dW\b" % (round(power), round(v["power_cap"])))
                    self.assertRegex(line, r"^\s*│\s*%d\s" % gpu["index"])
                self.assertNotRegex(screen, r"ERROR|NVML ERROR")


class AgainstNvidiasPynvml(unittest.TestCase):
    """Debian's python3-pynvml (NVIDIA's pynvml, unchanged) and hipstack.pynvml run the same pynvml
    script (smi-lib/python/tests/pynvml_figures.py: every call hipstack.pynvml answers) on the same
    NVML double: every figure and every NVML error must be the same. Where NVIDIA's pynvml finds no
    entry point in the double (NVML_ERROR_FUNCTION_NOT_FOUND, 13) hipstack answers from what it has
    (ANSWERED_FROM_OTHER_FACTS) and must give a figure."""
    ANSWERED_FROM_OTHER_FACTS = {"index": "the handle's index", "management_limit": "the enforced limit (power_cap)"}

    def figures(self, module, env_extra):
        env = {k: v for k, v in os.environ.items() if not k.startswith("HIPSTACK_") or k == "HIPSTACK_SMI_LIBRARY"}
        env.update(env_extra)
        script = os.path.join(PACKAGE, "tests", "pynvml_figures.py")
        proc = subprocess.run(["/usr/bin/python3", script, module], capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return json.loads(proc.stdout)

    def test_the_same_figures_as_nvidias_pynvml(self):
        empty = tempfile.mkdtemp(prefix="no-amd-")
        self.addCleanup(os.rmdir, empty)
        fake = os.environ["FAKE_NVML_FULL"]
        for script in ("h200.txt", "h100x2-mig.txt"):
            with self.subTest(gpus=script):
                played = {"HIPSTACK_FAKE_NVML_SCRIPT": os.path.join(os.environ["FAKE_NVML_SCRIPTS_DIR"], script)}
                # NVIDIA's pynvml loads libnvidia-ml.so.1 by name: the double's folder first on the path.
                theirs = self.figures("pynvml", dict(played, LD_LIBRARY_PATH=os.path.dirname(fake),
                                                     PYTHONPATH=os.path.join(NVIDIA_PYNVML, "usr/lib/python3/dist-packages")))
                ours = self.figures("hipstack.pynvml", dict(played, PYTHONPATH=PACKAGE, HIPSTACK_SYSFS_ROOT=empty,
                                                            HIPSTACK_NVML_LIBRARY=fake))
                self.assertEqual(ours["system"], theirs["system"])
                self.assertEqual(len(ours["gpus"]), len(theirs["gpus"]))
                self.assertGreater(len(theirs["gpus"][0]), 30)
                for index, (mine, real) in enumerate(zip(ours["gpus"], theirs["gpus"])):
                    self.assertEqual(sorted(mine), sorted(real))
                    for call, answer in real.items():
                        if answer == {"error": 13}:
                            self.assertIn(call, self.ANSWERED_FROM_OTHER_FACTS, f"GPU {index}: the double lacks {call}")
                            self.assertNotIsInstance(mine[call], dict, f"GPU {index} {call}: {mine[call]}")
                        else:
                            self.assertEqual(mine[call], answer, f"GPU {index} {call}")


if __name__ == "__main__":
    SMI, PACKAGE, CAPTURES, CACHE = sys.argv[1:5]
    unittest.main(argv=[sys.argv[0]] + sys.argv[5:], verbosity=2)
