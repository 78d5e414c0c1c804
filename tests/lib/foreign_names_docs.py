#!/usr/bin/env python3
"""The pynvml, amdsmi, rocm-smi, NFD and job-figure tables of docs/foreign-names.md, generated from
`hipstack-smi catalogue --json` (whose pynvml_calls, amdsmi_keys, rocm_smi_keys, nfd_labels and
job_figures lists are smi-lib/src/foreign/pynvml.cpp, amdsmi.cpp, rocm_smi.cpp, nfd.cpp and
job_summary.cpp), each between its markers: <!-- pynvml names: begin --> ... <!-- pynvml names: end -->,
and the others likewise.

Usage: foreign_names_docs.py HIPSTACK_SMI DOC --check   (exit 1 and a diff when a table drifted)
       foreign_names_docs.py HIPSTACK_SMI DOC --write   (rewrites the tables in place)
"""
import sys

from generated_docs import catalogue, cell, replace_between, write_or_check

# (marker word, the catalogue's key, the name column's heading)
TABLES = (("pynvml", "pynvml_calls", "pynvml call, argument or field"), ("amdsmi", "amdsmi_keys", "amdsmi call or key"),
          ("rocm-smi", "rocm_smi_keys", "rocm-smi key"), ("nfd", "nfd_labels", "NFD label"),
          ("jobs", "job_figures", "job summary figure"))


def table(rows, word, heading):
    lines = [f"<!-- {word} names: begin -->", "",
             (f"{len(rows)} labels." if word == "nfd" else f"{len(rows)} keys." if word == "rocm-smi" else
              f"{len(rows)} figures." if word == "jobs" else
              f"{len(rows)} names, {len({r['name'].split('.')[0].split('(')[0] for r in rows})} calls."), "",
             f"| {heading} | catalogue metrics ({'the note says how' if word == 'jobs' else 'first the GPU gives'}) | notes |", "|---|---|---|"]
    for r in rows:
        source = (", " if word == "jobs" else " else ").join(f"`{m}`" for m in r["from"])
        if r["instance"]:
            source += f" (`{r['instance']}`)"
        lines.append(f"| `{r['name']}` | {source} | {cell(r['note'])} |")
    lines += ["", f"<!-- {word} names: end -->"]
    return "\n".join(lines)


def main():
    smi, path, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    doc = catalogue(smi)
    text = open(path, encoding="utf-8").read()
    wanted = text
    for word, key, heading in TABLES:
        wanted = replace_between(wanted, f"<!-- {word} names: begin -->", f"<!-- {word} names: end -->",
                                 table(doc[key], word, heading))
    return write_or_check(path, text, wanted, mode, "a table is not what the library's foreign names say")


if __name__ == "__main__":
    sys.exit(main())
