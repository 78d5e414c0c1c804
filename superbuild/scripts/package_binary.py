#!/usr/bin/env python3
"""Builds the .deb and .rpm packages the superbuild makes itself, from the stage and its manifest.json:
  - one per package rule of the `binary` components (Debian's ROCm, relocated into the prefix): the
    files the rules gave it, depending on the system packages its components declare (per format) and
    on the packages of the binary components they depend on;
  - the manifest's metapackages (no files but their documents; they depend on packages of the release).
Each package carries /usr/share/doc/PACKAGE/copyright (for the relocated Debian packages: their own
copyright files, which state the upstream licences) and the release's changelog; versioned .debs carry
a lintian override for /opt (docs/packaging.md says why).

Usage: package_binary.py STAGE_DIR OUT_DIR DEB_CHANGELOG RPM_CHANGELOG
  DEB_CHANGELOG   the release's changelog in Debian's format (the in-tree build's packaging/changelog;
                  its entries name the package "hipstack" and its first entry the maintainer)
  RPM_CHANGELOG   the same as an rpm %changelog (packaging/rpm-changelog)

Packages are built concurrently (HIPSTACK_PACKAGE_JOBS at a time, default: the CPUs), each with one
xz thread, largest first: the output does not depend on how many run at once.

Reproducible: every file's time is clamped to $SOURCE_DATE_EPOCH (required), permissions are set
explicitly (the umask does not matter), files are listed sorted, owners are root, and rpmbuild takes
its build time and host from the environment it is given.
"""
import concurrent.futures
import gzip
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap

RELEASE = "1"
# The package whose maintainer scripts manage the /opt/hipstack alternative
# (superbuild/cmake/HipstackPackaging.cmake): every versioned package depends on it.
ALTERNATIVE_OWNER = "hipstack-smi-lib"
# xz level 3, not 6: rocSPARSE's 1.3 GB library compresses 4x faster (about a minute instead of five, for
# each of the .deb and the .rpm) into a package 45% larger (docs/superbuild.md). One thread each: the
# output of xz's multi-threaded mode differs from the single-threaded one, so it would depend on the
# machine; the packages are built side by side instead (main).
XZ_LEVEL = 3
HERE = os.path.dirname(os.path.abspath(__file__))
OUR_COPYRIGHT = os.path.join(HERE, "..", "packaging", "copyright")
LINTIAN_OVERRIDES = os.path.join(HERE, "..", "packaging", "lintian-overrides")
# Debian copyright files name licences by their short names; rpm's License tag takes SPDX identifiers.
SPDX = {"Expat": "MIT", "MIT": "MIT", "Apache-2": "Apache-2.0", "Apache-2.0": "Apache-2.0",
        "BSD-2-clause": "BSD-2-Clause", "BSD-3-clause": "BSD-3-Clause", "BSL-1": "BSL-1.0",
        "NCSA": "NCSA", "Illinois-NCSA": "NCSA", "Khronos": "LicenseRef-Khronos", "Sun": "LicenseRef-Sun",
        # ROCm 7.2.4's packages (the current track): LLVM's licence, RCCL's and rocSOLVER's.
        "APACHE-2-LLVM-EXCEPTIONS": "Apache-2.0 WITH LLVM-exception", "BSD-2-clause-or-Expat": "(BSD-2-Clause OR MIT)",
        "BSD-3-Clause-Open-MPI": "BSD-3-Clause-Open-MPI", "SunPro": "SunPro", "GPL-2": "GPL-2.0-only",
        "BSD-3-Clause-Nvidia": "LicenseRef-BSD-3-Clause-Nvidia", "BSD-3-clause-lapack": "LicenseRef-BSD-3-clause-lapack",
        "public-domain": "LicenseRef-public-domain"}


def fail(message):
    sys.exit(f"package_binary.py: {message}")


class Package:
    """One package to build: its name, what it holds and needs, and its documents."""

    def __init__(self, name, summary, arch_dependent):
        self.name = name
        self.summary = summary
        self.arch_dependent = arch_dependent
        self.components = []   # binary components whose files it holds
        self.files = []        # paths relative to the stage root
        self.system = {"deb": [], "rpm": []}
        self.ours = []         # packages of this release it depends on (exact version)


def binary_packages(manifest):
    """The binary components' packages, with their files and dependencies."""
    components = manifest["components"]
    version = manifest["version"]
    release = manifest.get("release", version)  # the version and the track's suffix: in package names
    packages = {}
    for name, component in components.items():
        if component["kind"] != "binary":
            continue
        for rule in component["packages"]:
            p = packages.setdefault(rule["package"], Package(rule["package"], "", True))
            if name not in p.components:
                p.components.append(name)
            p.files.extend(rule["files"])
    for p in packages.values():
        role = p.name.removeprefix("hipstack-amd-").replace(release, "")
        p.summary = f"AMD ROCm {role} of hipstack {release}"
        for name in p.components:
            for dep in components[name]["depends"]:
                d = components[dep]
                if d["kind"] == "system":
                    for fmt in ("deb", "rpm"):
                        p.system[fmt].extend(x for x in d["system"].get(fmt, []) if x not in p.system[fmt])
                elif d["kind"] == "binary":
                    p.ours.extend(r["package"] for r in d["packages"]
                                  if r["package"] != p.name and "-dev" not in r["package"])
        # A -dev package needs the runtime package of the same name.
        base = p.name.replace("-dev" + release, release)
        if base != p.name and base in packages:
            p.ours.append(base)
        p.ours.append(ALTERNATIVE_OWNER + release)
        p.ours = sorted(set(p.ours))
    return packages


def metapackages(manifest, known):
    """The manifest's metapackages; each dependency must be a package of this release."""
    packages = {}
    for name, meta in sorted(manifest.get("metapackages", {}).items()):
        if name in known:
            fail(f"metapackage {name} has the name of a component's package")
        unknown = [d for d in meta["depends"] if d not in known]
        if unknown:
            fail(f"metapackage {name} depends on {', '.join(unknown)}, which no component of the manifest makes")
        p = Package(name, meta["summary"], False)
        p.ours = list(meta["depends"])
        packages[name] = p
    return packages


def debian_copyrights(manifest, package, stage):
    """(Debian package, version, text of its copyright file) for each .deb a binary package holds."""
    prefix = manifest["prefix"].lstrip("/")
    out = []
    for name in package.components:
        for deb in manifest["components"][name]["origin"]["debs"]:
            path = os.path.join(stage, prefix, "share", "doc", deb["package"], "copyright")
            if not os.path.isfile(path):
                fail(f"{package.name}: {deb['package']} has no copyright file in the stage ({path})")
            with open(path, encoding="utf-8") as f:
                out.append((deb["package"], deb["version"], f.read()))
    return out


def copyright_text(manifest, package, stage):
    if not package.components:
        with open(OUR_COPYRIGHT, encoding="utf-8") as f:
            return f.read()
    parts = [f"{package.name}: Debian's packages of AMD ROCm, relocated by hipstack under\n"
             f"{manifest['prefix']}. They keep their own copyright and licence terms, stated\n"
             "below as each Debian package states them (its /usr/share/doc/PACKAGE/copyright).\n"]
    for deb, version, text in debian_copyrights(manifest, package, stage):
        parts.append(f"\n==> {deb} {version} <==\n\n{text}")
    return "".join(parts)


def rpm_license(manifest, package, stage):
    if not package.components:
        return "LicenseRef-hipstack-no-license-stated"
    names = []
    for deb, _, text in debian_copyrights(manifest, package, stage):
        for short in re.findall(r"^License: *(\S+) *$", text, re.M):
            if short not in SPDX:
                fail(f"{package.name}: {deb}'s copyright names licence '{short}', which package_binary.py "
                     "cannot name in SPDX terms: add it to SPDX")
            if SPDX[short] not in names:
                names.append(SPDX[short])
    return " AND ".join(sorted(names))


def changelog_for(text, package):
    """The release changelog with every entry naming this package (Debian's changelog format)."""
    return re.sub(r"(^|\n\n)hipstack \(", lambda m: f"{m.group(1)}{package} (", text)


def gzip_bytes(data):
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=buffer, mtime=0) as f:
        f.write(data)
    return buffer.getvalue()


def write_file(path, data, mode=0o644):
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8"))
    os.chmod(path, mode)


def copy_files(stage, files, root):
    for f in sorted(files):
        source = os.path.join(stage, f)
        target = os.path.join(root, f)
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        if os.path.islink(source):
            os.symlink(os.readlink(source), target)
        else:
            shutil.copyfile(source, target)
            os.chmod(target, 0o755 if os.stat(source).st_mode & 0o111 else 0o644)


def normalise_tree(root, epoch):
    """Folders 0755 whatever the umask, and every time clamped to the epoch."""
    for folder, dirs, names in os.walk(root):
        for d in dirs:
            path = os.path.join(folder, d)
            if not os.path.islink(path):
                os.chmod(path, 0o755)
        for n in dirs + names:
            os.utime(os.path.join(folder, n), (epoch, epoch), follow_symlinks=False)
    os.chmod(root, 0o755)
    os.utime(root, (epoch, epoch))


def description_lines(text):
    """A long description as Debian control lines: at most 79 characters, " ." for blank lines."""
    lines = []
    for paragraph in text.split("\n\n"):
        if lines:
            lines.append(" .")
        lines.extend(" " + line for line in textwrap.wrap(paragraph, 78, break_on_hyphens=False))
    return lines


def long_description(manifest, package):
    if package.components:
        debs = [f"{d['package']} {d['version']}" for name in package.components
                for d in manifest["components"][name]["origin"]["debs"]]
        return (f"Debian's ROCm packages (hipstack's {manifest.get('track', 'default')} release track) relocated "
                f"under {manifest['prefix']}: {', '.join(debs)}.\n\n"
                f"Versioned packages install under {manifest['prefix']}, so releases co-install; "
                "/opt/hipstack points at the newest installed release.")
    return (f"This metapackage depends on the packages of hipstack {manifest.get('release', manifest['version'])}: "
            f"{', '.join(package.ours)}. Upgrading it installs the next release's packages beside these.")


def stage_package(manifest, package, stage, root, deb_changelog, epoch, fmt):
    """The package's file tree in ROOT: its staged files and its documents."""
    os.makedirs(root, mode=0o755)
    copy_files(stage, package.files, root)
    doc = os.path.join(root, "usr", "share", "doc", package.name)
    write_file(os.path.join(doc, "copyright"), copyright_text(manifest, package, stage))
    if fmt == "deb":
        write_file(os.path.join(doc, "changelog.Debian.gz"),
                   gzip_bytes(changelog_for(deb_changelog, package.name).encode("utf-8")))
        if package.components:
            with open(LINTIAN_OVERRIDES, encoding="utf-8") as f:
                overrides = f.read().replace("@PACKAGE@", package.name)
            write_file(os.path.join(root, "usr", "share", "lintian", "overrides", package.name), overrides)
    normalise_tree(root, epoch)


def build_deb(manifest, package, stage, out, changelogs, maintainer, epoch):
    version = manifest["version"]
    arch = "amd64" if package.arch_dependent else "all"
    depends = package.system["deb"] + [f"{p} (= {version}-{RELEASE})" for p in package.ours]
    with tempfile.TemporaryDirectory() as work:
        root = os.path.join(work, "root")
        stage_package(manifest, package, stage, root, changelogs[0], epoch, "deb")
        control = [f"Package: {package.name}", f"Version: {version}-{RELEASE}", f"Architecture: {arch}",
                   f"Maintainer: {maintainer}", "Section: " + ("libs" if package.components else "metapackages"),
                   "Priority: optional"]
        if depends:
            control.append("Depends: " + ", ".join(depends))
        control.append(f"Description: {package.summary}")
        control.extend(description_lines(long_description(manifest, package)))
        write_file(os.path.join(root, "DEBIAN", "control"), "\n".join(control) + "\n")
        normalise_tree(root, epoch)
        target = os.path.join(out, f"{package.name}_{version}-{RELEASE}_{arch}.deb")
        subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", f"-z{XZ_LEVEL}", "--threads-max=1", "--build", root, target], check=True,
                       stdout=subprocess.DEVNULL, env=dict(os.environ, SOURCE_DATE_EPOCH=str(epoch)))


def owned_folders(manifest, package):
    """The folders an rpm owns: those below the prefix its files are in, and its doc folder."""
    prefix = manifest["prefix"]
    folders = {f"/usr/share/doc/{package.name}"}
    for f in package.files:
        parent = os.path.dirname("/" + f)
        while parent.startswith(prefix):
            folders.add(parent)
            parent = os.path.dirname(parent)
    return sorted(folders)


def build_rpm(manifest, package, stage, out, changelogs, epoch):
    version = manifest["version"]
    arch = "x86_64" if package.arch_dependent else "noarch"
    requires = package.system["rpm"] + [f"{p} = {version}-{RELEASE}" for p in package.ours]
    with tempfile.TemporaryDirectory() as work:
        root = os.path.join(work, "root")
        stage_package(manifest, package, stage, root, changelogs[0], epoch, "rpm")
        description = long_description(manifest, package).split("\n\n")
        spec = [f"Name: {package.name}", f"Version: {version}", f"Release: {RELEASE}",
                f"Summary: {package.summary}", f"License: {rpm_license(manifest, package, stage)}",
                "Group: System Environment/Base", f"BuildArch: {arch}",
                # rpm finds the shared libraries the ELF files need by soname (libdrm.so.2()(64bit), ...)
                # and provides those of the package. Not the perl() and python() modules it would read
                # from hipcc's and rocminfo's scripts: the manifest names their packages (hipcc-tools).
                "AutoReqProv: yes",
                "%global __requires_exclude ^(perl|python[0-9.]*)\\\\(",
                "%global __provides_exclude ^(perl|python[0-9.]*)\\\\("]
        spec += [f"Requires: {r}" for r in requires]
        spec += ["", "%description"]
        spec += [textwrap.fill(paragraph, 79, break_on_hyphens=False) + "\n" for paragraph in description]
        spec += ["%install", "cp -a '%s'/. %%{buildroot}/" % root.replace("'", "'\\''"), "", "%files"]
        spec += ["%dir " + d for d in owned_folders(manifest, package)]
        spec += ["/" + f for f in sorted(package.files)]
        spec += [f"%license /usr/share/doc/{package.name}/copyright", "", "%changelog", changelogs[1]]
        spec_path = os.path.join(work, package.name + ".spec")
        write_file(spec_path, "\n".join(spec) + "\n")
        subprocess.run(["rpmbuild", "-bb", "--nodeps", "--quiet", "--define", f"_topdir {work}/rpm",
                        "--define", f"_rpmdir {out}", "--define", "_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm",
                        "--define", "use_source_date_epoch_as_buildtime 1", "--define", "clamp_mtime_to_source_date_epoch 1",
                        "--define", "_buildhost reproducible", "--define", "__strip /bin/true",
                        "--define", f"_binary_payload w{XZ_LEVEL}.xzdio",
                        # No /usr/lib/.build-id links: two releases' packages would both own them.
                        "--define", "_build_id_links none",
                        "--define", "__os_install_post %{nil}", "--define", "debug_package %{nil}", spec_path],
                       check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, SOURCE_DATE_EPOCH=str(epoch)))


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    stage, out, deb_changelog_path, rpm_changelog_path = sys.argv[1:]
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch or not epoch.isdigit():
        fail("SOURCE_DATE_EPOCH must be set (seconds since 1970): the packages' times come from it")
    os.umask(0o022)
    with open(os.path.join(stage, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    with open(deb_changelog_path, encoding="utf-8") as f:
        deb_changelog = f.read()
    with open(rpm_changelog_path, encoding="utf-8") as f:
        rpm_changelog = f.read().rstrip("\n")
    found = re.search(r"\n -- (.+? <[^>]+>)  ", deb_changelog)
    if not deb_changelog.startswith(f"hipstack ({manifest['version']}-{RELEASE})") or not found:
        fail(f"{deb_changelog_path}: its first entry is not hipstack ({manifest['version']}-{RELEASE}) with a maintainer")
    maintainer = found.group(1)
    os.makedirs(out, exist_ok=True)
    packages = binary_packages(manifest)
    known = {r["package"] for c in manifest["components"].values() for r in c["packages"]}
    packages.update(metapackages(manifest, known))
    sizes = {}
    for name in sorted(packages):
        package = packages[name]
        missing = [f for f in package.files if not os.path.lexists(os.path.join(stage, f))]
        if missing:
            fail(f"{name}: {len(missing)} file(s) of the manifest are not in the stage, e.g. {missing[0]}")
        sizes[name] = sum(os.lstat(os.path.join(stage, f)).st_size for f in package.files)
    changelogs = (deb_changelog, rpm_changelog)
    jobs = package_jobs()
    # Largest first, so that the big libraries package's .deb and .rpm (most of the time) start at once.
    tasks = [(name, fmt) for name in sorted(packages, key=lambda n: (-sizes[n], n)) for fmt in ("deb", "rpm")]
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {}
        for name, fmt in tasks:
            if fmt == "deb":
                futures[(name, fmt)] = pool.submit(build_deb, manifest, packages[name], stage, out, changelogs,
                                                   maintainer, int(epoch))
            else:
                futures[(name, fmt)] = pool.submit(build_rpm, manifest, packages[name], stage, out, changelogs, int(epoch))
        for (name, fmt), future in futures.items():
            try:
                future.result()
            except subprocess.CalledProcessError as e:
                pool.shutdown(cancel_futures=True)
                fail(f"{name}: building its .{fmt} failed: {' '.join(e.cmd[:2])} exited {e.returncode}")
            except SystemExit:
                pool.shutdown(cancel_futures=True)
                raise
    for name in sorted(packages):
        print(f"package_binary.py: {name}: {len(packages[name].files)} files, .deb and .rpm")


def package_jobs():
    """How many packages are built at once: HIPSTACK_PACKAGE_JOBS, else the CPUs this process may use."""
    value = os.environ.get("HIPSTACK_PACKAGE_JOBS", "")
    if value:
        if not value.isdigit() or int(value) < 1:
            fail(f"HIPSTACK_PACKAGE_JOBS must be a positive number, not '{value}'")
        return int(value)
    return max(1, len(os.sched_getaffinity(0)))


if __name__ == "__main__":
    main()
