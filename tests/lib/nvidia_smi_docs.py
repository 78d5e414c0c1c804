#!/usr/bin/env python3
"""The field table of docs/nvidia-smi-compat.md, generated from `hipstack-smi catalogue --json`
(whose nvidia_smi_fields list is smi-lib/src/foreign/nvidia_smi.cpp), between the markers
<!-- nvidia-smi fields: begin --> and <!-- nvidia-smi fields: end -->.

Usage: nvidia_smi_docs.py HIPSTACK_SMI DOC --check   (exit 1 and a diff when the table drifted)
       nvidia_smi_docs.py HIPSTACK_SMI DOC --write   (rewrites the table in place)
"""
import sys

from generated_docs import catalogue, cell, replace_between, write_or_check

BEGIN, END = "<!-- nvidia-smi fields: begin -->", "<!-- nvidia-smi fields: end -->"


def table(smi):
    fields = catalogue(smi)["nvidia_smi_fields"]
    answered = sum(f["answered"] for f in fields)
    lines = [BEGIN, "",
             f"{len(fields)} fields ({sum(len(f['aliases']) for f in fields)} aliases besides); hipstack has a figure "
             f"for {answered}, the other {len(fields) - answered} print nvidia-smi's \"not available\" for the reason given.",
             "", "| field (aliases) | unit | hipstack's figure | notes |", "|---|---|---|---|"]
    for f in fields:
        names = f"`{f['name']}`" + "".join(f" `{a}`" for a in f["aliases"])
        if f["answered"]:
            source = " else ".join(f"`{m}`" for m in f["from"]) or "-"
            if f["instance"]:
                source += f" (`{f['instance']}`)"
            if f["reason"]:
                source += f" (reason `{f['reason']}`)"
        else:
            source = f"`{f['missing']}`"
        lines.append(f"| {names} | {f['unit'] or '-'} | {source} | {cell(f['note'])} |")
    lines += ["", END]
    return "\n".join(lines)


def main():
    smi, path, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    text = open(path, encoding="utf-8").read()
    return write_or_check(path, text, replace_between(text, BEGIN, END, table(smi)), mode,
                          "the field table is not what the catalogue says")


if __name__ == "__main__":
    sys.exit(main())
