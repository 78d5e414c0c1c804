#!/usr/bin/env python3
"""The XID table of docs/errors.md, generated from `hipstack-smi ras --xid-catalogue --json` (the
library's smi-lib/src/errors/xid_catalogue.cpp), between <!-- xid table: begin --> and
<!-- xid table: end -->.

Usage: errors_docs.py HIPSTACK_SMI DOC --check   (exit 1 and a diff when the table drifted)
       errors_docs.py HIPSTACK_SMI DOC --write   (rewrites the table in place)
"""
import json
import subprocess
import sys

from generated_docs import cell, replace_between, write_or_check

BEGIN, END = "<!-- xid table: begin -->", "<!-- xid table: end -->"


def table(xids):
    lines = [BEGIN, "", f"{len(xids)} codes.", "",
             "| XID | mnemonic | description | action | if repeated | health | fault | NVIDIA's buckets (immediate / investigatory) | applies to |",
             "|---|---|---|---|---|---|---|---|---|"]
    for x in xids:
        buckets = f"{x['nvidia_immediate'] or '-'} / {x['nvidia_investigatory'] or '-'}"
        description = x["description"] + (f" ({x['note']})" if x["note"] else "")
        lines.append(f"| {x['code']} | `{x['mnemonic']}` | {cell(description)} | `{x['action']}` | `{x['if_repeated']}` | "
                     f"{x['verdict']} | {x['fault']} | {cell(buckets)} | {x['applies_to']} |")
    lines += ["", END]
    return "\n".join(lines)


def main():
    smi, path, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    doc = json.loads(subprocess.run([smi, "--json", "ras", "--xid-catalogue"], capture_output=True, text=True, check=True,
                                    timeout=60).stdout)
    text = open(path, encoding="utf-8").read()
    wanted = replace_between(text, BEGIN, END, table(doc["xids"]))
    return write_or_check(path, text, wanted, mode, "the XID table is not what the library's catalogue says")


if __name__ == "__main__":
    sys.exit(main())
