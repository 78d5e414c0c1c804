#!/usr/bin/env python3
"""The release tracks of the component manifest (docs/superbuild.md), for superbuild/build.sh:
  tracks.py MANIFEST list                 every track, the default first: name, suite, ROCm, prefix, summary
  tracks.py MANIFEST field TRACK KEY      one field of a track (lists space-separated); TRACK '' is the default
  tracks.py MANIFEST default              the default track's name
  tracks.py MANIFEST pins TRACK PACKAGE...   "package version sha256" of each named .deb of the
                                          track's binary components (the tests' Debian roots pin them)
Exit 2 with a message naming the manifest for an unknown track or field."""
import json
import re
import sys


def tracks(manifest):
    found = manifest.get("tracks") or {"default": {"default": True, "release_suffix": ""}}
    defaults = [name for name, t in found.items() if t.get("default")]
    if len(defaults) != 1:
        raise SystemExit(f"tracks.py: exactly one track has \"default\": true (found: {', '.join(defaults) or 'none'})")
    return dict(sorted(found.items(), key=lambda item: not item[1].get("default")))


def version(top):
    with open(top, encoding="utf-8") as f:
        m = re.search(r"set\(HIPSTACK_RELEASE_VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)\)", f.read())
    return m.group(1) if m else "X.Y.Z"


def pins(path, track, wanted):
    with open(path, encoding="utf-8") as f:
        manifest = json.load(f)
    found = {}
    for component in manifest["components"].values():
        if track not in component.get("tracks", [track]) or component["origin"]["kind"] != "binary":
            continue
        for deb in component["origin"]["debs"]:
            found[deb["package"]] = f"{deb['package']} {deb['version']} {deb['sha256']}"
    missing = [p for p in wanted if p not in found]
    if missing:
        print(f"tracks.py: {path}: track '{track}' pins no {', '.join(missing)}", file=sys.stderr)
        return 2
    print("\n".join(found[p] for p in wanted))
    return 0


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    path, command = argv[1], argv[2]
    with open(path, encoding="utf-8") as f:
        all_tracks = tracks(json.load(f))
    if command == "default":
        print(next(iter(all_tracks)))
        return 0
    if command == "list":
        release = version(re.sub(r"superbuild/[^/]*$", "CMakeLists.txt", path))
        for name, t in all_tracks.items():
            mark = " (default)" if t.get("default") else ""
            prefix = f"/opt/hipstack-{release}{t.get('release_suffix', '')}"
            print(f"{name}{mark}: {t.get('distribution', '?')} {t.get('suite', '?')}, ROCm {t.get('rocm', '?')}, "
                  f"{prefix}\n    {t.get('summary', '')}")
        return 0
    if command == "pins" and len(argv) >= 5:
        return pins(path, argv[3], argv[4:])
    if command == "field" and len(argv) == 5:
        name = argv[3] or next(iter(all_tracks))
        if name not in all_tracks:
            print(f"tracks.py: {path} has no release track '{name}' (it has: {', '.join(all_tracks)})", file=sys.stderr)
            return 2
        value = all_tracks[name].get(argv[4])
        if value is None:
            print(f"tracks.py: {path}: track '{name}' has no '{argv[4]}'", file=sys.stderr)
            return 2
        print(" ".join(value) if isinstance(value, list) else value)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
