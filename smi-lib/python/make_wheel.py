#!/usr/bin/env python3
"""Builds the hipstack Python package as a wheel (PEP 427 / the binary distribution format): a
py3-none-any zip of the package and its .dist-info (METADATA, WHEEL, RECORD with each file's SHA-256).

The package is ctypes over libhipstack-smi's C API, so the wheel holds no compiled code: installed with
pip into any environment it loads the library from $HIPSTACK_SMI_LIBRARY, else /opt/hipstack/lib (the
hipstack packages), else the dynamic linker's search (docs/python.md). Reproducible: every entry gets
SOURCE_DATE_EPOCH (else 1980-01-01) as its date, and entries are written in a fixed order.

Usage: make_wheel.py PACKAGE_DIR VERSION OUT_DIR   (prints the wheel's path)
"""
import base64
import hashlib
import os
import sys
import time
import zipfile



def modules(package_dir):
    """Every module of the package folder (the one list CMake's install uses too); not _install.py:
    that is the deb's, written into the build tree."""
    return sorted(name for name in os.listdir(package_dir) if name.endswith(".py") and name != "_install.py")

METADATA = """Metadata-Version: 2.1
Name: hipstack
Version: {version}
Summary: GPU identity, telemetry, health and control for AMD and NVIDIA GPUs (libhipstack-smi's C API through ctypes)
License: none stated (LicenseRef-hipstack-no-license-stated, as the hipstack packages)
Requires-Python: >=3.9
Classifier: Programming Language :: Python :: 3
Classifier: Operating System :: POSIX :: Linux

The hipstack package over libhipstack-smi (install the hipstack-runtime package, or set
HIPSTACK_SMI_LIBRARY), with pynvml- and amdsmi-style modules (hipstack.pynvml, hipstack.amdsmi)
that answer for AMD and NVIDIA GPUs alike. Documentation: docs/python.md of the hipstack sources.
"""

WHEEL = """Wheel-Version: 1.0
Generator: hipstack make_wheel.py
Root-Is-Purelib: true
Tag: py3-none-any
"""


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n"


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[-1].strip())
    package_dir, version, out_dir = sys.argv[1:]
    if not version.replace(".", "").isdigit():
        sys.exit(f"make_wheel.py: version '{version}' is not N.N.N")
    epoch = max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800)  # zip dates start at 1980
    date = time.gmtime(epoch)[:6]
    info = f"hipstack-{version}.dist-info"
    entries = []
    for name in modules(package_dir):
        with open(os.path.join(package_dir, name), "rb") as f:
            entries.append((f"hipstack/{name}", f.read()))
    entries.append((f"{info}/METADATA", METADATA.format(version=version).encode()))
    entries.append((f"{info}/WHEEL", WHEEL.encode()))
    record = "".join(record_line(name, data) for name, data in entries) + f"{info}/RECORD,,\n"
    entries.append((f"{info}/RECORD", record.encode()))

    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"hipstack-{version}-py3-none-any.whl")
    partial = path + ".partial"
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in entries:
            entry = zipfile.ZipInfo(name, date_time=date)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(entry, data)
    os.replace(partial, path)
    print(path)


if __name__ == "__main__":
    main()
