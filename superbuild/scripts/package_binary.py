#!/usr/bin/env python3
"""Builds the .deb and .rpm packages of the superbuild's `binary` components (Debian's ROCm, relocated
into the prefix) from the stage and its manifest.json: each package holds the files the manifest's
package rules gave it, and depends on the system packages its components declare (per format) and
on the packages of the binary components they depend on.

Usage: package_binary.py STAGE_DIR OUT_DIR

Reproducible: every file's time is clamped to $SOURCE_DATE_EPOCH (required), files are listed sorted,
owners are root, and rpmbuild takes its build time and host from the environment it is given.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

MAINTAINER = "hipstack maintainers <hipstack@localhost>"
RELEASE = "1"


def fail(message):
    sys.exit(f"package_binary.py: {message}")


def collect(manifest):
    """package name -> {"components": [...], "files": [...]} for every binary component's packages."""
    components = manifest["components"]
    packages = {}
    for name, component in components.items():
        if component["kind"] != "binary":
            continue
        for rule in component["packages"]:
            entry = packages.setdefault(rule["package"], {"components": [], "files": []})
            if name not in entry["components"]:
                entry["components"].append(name)
            entry["files"].extend(rule["files"])
    return packages


def dependencies(manifest, packages, package, fmt):
    """What `package` needs: system packages (deb or rpm names) and our own packages."""
    components = manifest["components"]
    system, ours = [], []
    for name in packages[package]["components"]:
        for dep in components[name]["depends"]:
            d = components[dep]
            if d["kind"] == "system":
                system.extend(x for x in d["system"].get(fmt, []) if x not in system)
            elif d["kind"] == "binary":
                for rule in d["packages"]:
                    p = rule["package"]
                    if p != package and "-dev" not in p and p not in ours:
                        ours.append(p)
    # A -dev package needs the runtime package of the same name.
    base = package.replace("-dev" + manifest["version"], manifest["version"])
    if base != package and base in packages and base not in ours:
        ours.append(base)
    return system, sorted(ours)


def copy_files(stage, files, root):
    for f in sorted(files):
        source = os.path.join(stage, f)
        target = os.path.join(root, f)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if os.path.islink(source):
            os.symlink(os.readlink(source), target)
        else:
            shutil.copy2(source, target)


def clamp_times(root, epoch):
    for folder, dirs, names in os.walk(root):
        for n in dirs + names:
            os.utime(os.path.join(folder, n), (epoch, epoch), follow_symlinks=False)
    os.utime(root, (epoch, epoch))


def build_deb(manifest, packages, package, stage, out, epoch):
    version = manifest["version"]
    system, ours = dependencies(manifest, packages, package, "deb")
    depends = system + [f"{p} (= {version}-{RELEASE})" for p in ours]
    debs = [deb["package"] + " " + deb["version"]
            for name in packages[package]["components"]
            for deb in manifest["components"][name]["origin"]["debs"]]
    with tempfile.TemporaryDirectory() as work:
        root = os.path.join(work, "root")
        copy_files(stage, packages[package]["files"], root)
        os.makedirs(os.path.join(root, "DEBIAN"))
        control = [f"Package: {package}", f"Version: {version}-{RELEASE}", "Architecture: amd64",
                   f"Maintainer: {MAINTAINER}", "Section: libs", "Priority: optional"]
        if depends:
            control.append("Depends: " + ", ".join(depends))
        control.append(f"Description: AMD ROCm pieces of hipstack {version} ({', '.join(packages[package]['components'])})")
        control.append(" Debian 12's ROCm 5.2.3 packages relocated under " + manifest["prefix"] + ": " + ", ".join(debs) + ".")
        with open(os.path.join(root, "DEBIAN", "control"), "w") as f:
            f.write("\n".join(control) + "\n")
        clamp_times(root, epoch)
        target = os.path.join(out, f"{package}_{version}-{RELEASE}_amd64.deb")
        subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", root, target], check=True,
                       stdout=subprocess.DEVNULL, env=dict(os.environ, SOURCE_DATE_EPOCH=str(epoch)))


def build_rpm(manifest, packages, package, stage, out, epoch):
    version = manifest["version"]
    system, ours = dependencies(manifest, packages, package, "rpm")
    requires = system + [f"{p} = {version}-{RELEASE}" for p in ours]
    with tempfile.TemporaryDirectory() as work:
        root = os.path.join(work, "root")
        copy_files(stage, packages[package]["files"], root)
        clamp_times(root, epoch)
        spec = [f"Name: {package}", f"Version: {version}", f"Release: {RELEASE}",
                f"Summary: AMD ROCm pieces of hipstack {version}", "License: see /usr/share/doc",
                "BuildArch: x86_64", "AutoReqProv: no"]
        spec += [f"Requires: {r}" for r in requires]
        spec += ["%description", f"Debian 12's ROCm 5.2.3 packages relocated under {manifest['prefix']}.",
                 "%install", f"cp -a {root}/. %{{buildroot}}/", "%files"]
        spec += ["/" + f for f in sorted(packages[package]["files"])]
        spec_path = os.path.join(work, package + ".spec")
        with open(spec_path, "w") as f:
            f.write("\n".join(spec) + "\n")
        subprocess.run(["rpmbuild", "-bb", "--nodeps", "--quiet", "--define", f"_topdir {work}/rpm",
                        "--define", f"_rpmdir {out}", "--define", "_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm",
                        "--define", "use_source_date_epoch_as_buildtime 1", "--define", "clamp_mtime_to_source_date_epoch 1",
                        "--define", "_buildhost reproducible", "--define", "__strip /bin/true",
                        "--define", "__os_install_post %{nil}", "--define", "debug_package %{nil}", spec_path],
                       check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, SOURCE_DATE_EPOCH=str(epoch)))


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    stage, out = sys.argv[1:]
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch or not epoch.isdigit():
        fail("SOURCE_DATE_EPOCH must be set (seconds since 1970): the packages' times come from it")
    with open(os.path.join(stage, "manifest.json")) as f:
        manifest = json.load(f)
    os.makedirs(out, exist_ok=True)
    packages = collect(manifest)
    for package in sorted(packages):
        missing = [f for f in packages[package]["files"] if not os.path.lexists(os.path.join(stage, f))]
        if missing:
            fail(f"{package}: {len(missing)} file(s) of the manifest are not in the stage, e.g. {missing[0]}")
        build_deb(manifest, packages, package, stage, out, int(epoch))
        build_rpm(manifest, packages, package, stage, out, int(epoch))
        print(f"package_binary.py: {package}: {len(packages[package]['files'])} files")


if __name__ == "__main__":
    main()
