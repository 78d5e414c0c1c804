"""The hipstack wheel (make_wheel.py) as pip users meet it: a valid py3-none-any wheel whose RECORD
matches its files, byte-identical when built twice, which `pip install --no-index --target` installs
and which then works from there alone (not the source tree) against the built library.
Environment: HIPSTACK_SMI_LIBRARY, HIPSTACK_CAPTURES_DIR, HIPSTACK_SMI (the CLI, the oracle)."""
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(os.path.dirname(HERE), "hipstack")
MAKE_WHEEL = os.path.join(os.path.dirname(HERE), "make_wheel.py")
VERSION = "0.1.0"


def build(out, epoch="1700000000"):
    env = dict(os.environ, SOURCE_DATE_EPOCH=epoch)
    result = subprocess.run([sys.executable, MAKE_WHEEL, PACKAGE, VERSION, out], env=env, check=True,
                            capture_output=True, text=True)
    return result.stdout.strip()


class Wheel(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.TemporaryDirectory(prefix="hipstack-wheel-")
        self.addCleanup(self.work.cleanup)

    def test_record_names_every_file_with_its_digest(self):
        wheel = build(os.path.join(self.work.name, "a"))
        self.assertTrue(wheel.endswith(f"hipstack-{VERSION}-py3-none-any.whl"), wheel)
        with zipfile.ZipFile(wheel) as z:
            names = z.namelist()
            record = z.read(f"hipstack-{VERSION}.dist-info/RECORD").decode().splitlines()
            listed = {}
            for line in record:
                name, digest, size = line.rsplit(",", 2)
                listed[name] = (digest, size)
            self.assertEqual(sorted(listed), sorted(names))
            for name in names:
                if name.endswith("/RECORD"):
                    self.assertEqual(listed[name], ("", ""))
                    continue
                data = z.read(name)
                want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                self.assertEqual(listed[name], (want, str(len(data))), name)
            wheel_info = z.read(f"hipstack-{VERSION}.dist-info/WHEEL").decode()
            metadata = z.read(f"hipstack-{VERSION}.dist-info/METADATA").decode()
        self.assertIn("Tag: py3-none-any", wheel_info)
        self.assertIn("Root-Is-Purelib: true", wheel_info)
        self.assertIn(f"Version: {VERSION}", metadata)
        self.assertIn("hipstack/pynvml.py", names)
        self.assertNotIn("hipstack/_install.py", names)  # the deb's, naming its own prefix

    def test_built_twice_it_is_the_same(self):
        a, b = build(os.path.join(self.work.name, "a")), build(os.path.join(self.work.name, "b"))
        with open(a, "rb") as fa, open(b, "rb") as fb:
            self.assertEqual(fa.read(), fb.read())

    def test_pip_installs_it_and_it_reads_a_capture(self):
        wheel = build(os.path.join(self.work.name, "a"))
        target = os.path.join(self.work.name, "site")
        subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--no-cache-dir",
                        "--disable-pip-version-check", "--target", target, wheel], check=True, capture_output=True)
        capture = os.path.join(os.environ["HIPSTACK_CAPTURES_DIR"], "constructed/mi300x-8gpu-spx-nps1/sys")
        script = ("import json, hipstack, hipstack.pynvml as n\n"
                  f"s = hipstack.System(sysfs_root={capture!r})\n"
                  "print(json.dumps({'file': hipstack.__file__, 'bdfs': [d.bdf for d in s.devices()]}))\n")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["PYTHONPATH"] = target
        out = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {target!r})\n" + script],
                             env=env, check=True, capture_output=True, text=True).stdout
        got = json.loads(out)
        self.assertTrue(got["file"].startswith(target), got["file"])
        listed = json.loads(subprocess.run([os.environ["HIPSTACK_SMI"], "list", "--json", "--direct", "--sysfs-root", capture],
                                           check=True, capture_output=True, text=True).stdout)
        self.assertEqual(got["bdfs"], [d["bdf"] for d in listed["devices"]])
        self.assertEqual(len(got["bdfs"]), 8)


if __name__ == "__main__":
    unittest.main()
