"""One source for every foreign name (docs/foreign-names.md): hipstack.pynvml and hipstack.amdsmi take
each catalogue metric they read from the library's tables (hipstack.foreign_names), never from a name
of their own; the tables name exactly what the modules answer; Python, the C API and `hipstack-smi
catalogue --json` show the same tables.
Environment: HIPSTACK_SMI_LIBRARY, HIPSTACK_SMI (the built hipstack-smi)."""
import ast
import json
import os
import re
import subprocess
import unittest

import hipstack
import hipstack.amdsmi  # noqa: F401 (first: it imports _amdsmi_metrics)
from hipstack import _amdsmi_metrics

PACKAGE = os.path.dirname(hipstack.__file__)
# The compatibility layers and their helpers: where a metric name must not be written by hand.
# (Each layer's module and every helper module of its prefix in the package: a helper added later is in.)
MODULES = {tool: [tool + ".py", *sorted(f for f in os.listdir(PACKAGE) if f.startswith(prefix) and f.endswith(".py"))]
           for tool, prefix in (("pynvml", "_nvml_"), ("amdsmi", "_amdsmi_"))}
# A name of the tables' shape: a call (or the struct it fills), a call with arguments, or either with a
# dotted field. (pynvml's other names, nvmlReturn or nvmlStructToFriendlyObject, are not calls that read.)
FOREIGN_NAME = re.compile(r"^(nvml(Device|System)\w*|nvmlProcessInfo_t|amdsmi_(get|topo)_\w+)(\([^()]*\))?(\.\w+)*$")
# Calls a module declares unanswered (they raise NotSupported): no row in the table.
UNANSWERED = {"_not_read", "_no_source"}


def catalogue_json():
    return json.loads(subprocess.run([os.environ["HIPSTACK_SMI"], "catalogue", "--json"], capture_output=True, text=True,
                                     check=True, timeout=60).stdout)


def parsed(name):
    path = os.path.join(PACKAGE, name)
    with open(path, encoding="utf-8") as f:
        return path, ast.parse(f.read(), path)


def literals(tree):
    """Every string constant with its line, but a dict display's keys (the foreign tool's own keys, such
    as amdsmi's "vram_total": they may be spelled like a metric) and the arguments of UNANSWERED calls."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            skipped.update(id(k) for k in node.keys if k is not None)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in UNANSWERED:
            skipped.update(id(a) for a in node.args)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped:
            yield node.lineno, node.value


def used_names(tool):
    """The table names a module looks up: its literals of the tables' shape, and the gpu_metrics keys
    _amdsmi_metrics.py prefixes with the call."""
    out = set()
    for name in MODULES[tool]:
        _, tree = parsed(name)
        out.update(text for _, text in literals(tree) if FOREIGN_NAME.match(text))
    if tool == "amdsmi":
        keys = [*_amdsmi_metrics._FIELDS, *_amdsmi_metrics._LISTS, *_amdsmi_metrics._RESIDENCIES]
        out.update(_amdsmi_metrics._PREFIX + key for key in keys)
    return out


class ForeignNames(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.doc = catalogue_json()
        cls.metrics = {m["name"] for m in cls.doc["metrics"]}

    def test_no_metric_name_in_the_compatibility_layers(self):
        found = []
        for tool, names in MODULES.items():
            for name in names:
                path, tree = parsed(name)
                found += [f"{path}:{line}: \"{text}\"" for line, text in literals(tree) if text in self.metrics]
        self.assertEqual(found, [], "catalogue metric names written in the compatibility layers: take them from "
                                    "hipstack.foreign_names (docs/foreign-names.md, \"Adding a name\")")

    def test_each_table_name_is_used_and_each_used_name_is_in_the_table(self):
        for tool in ("pynvml", "amdsmi"):
            table, used = set(hipstack.foreign_names(tool)), used_names(tool)
            self.assertEqual(sorted(table - used), [], f"{tool}: names in the library's table the module never reads")
            self.assertEqual(sorted(used - table), [], f"{tool}: names the module reads that the library's table lacks")

    def test_python_c_api_and_cli_show_the_same_tables(self):
        for tool, key in (("pynvml", "pynvml_calls"), ("amdsmi", "amdsmi_keys")):
            python = {n: (e.metrics, e.instance, e.note) for n, e in hipstack.foreign_table(tool).items()}
            cli = {r["name"]: (tuple(r["from"]), r["instance"], r["note"]) for r in self.doc[key]}
            self.assertEqual(python, cli, tool)
            self.assertEqual(list(python), [r["name"] for r in self.doc[key]], f"{tool}: the table's order")
            for metric in self.doc["metrics"]:
                mine = sorted(n for n, e in python.items() if metric["name"] in e[0])
                self.assertEqual(sorted(metric[tool]), mine, f"{metric['name']}'s {tool} names")
        nvidia = hipstack.foreign_names("nvidia-smi")
        self.assertEqual(list(nvidia), [f["name"] for f in self.doc["nvidia_smi_fields"]])
        self.assertEqual(nvidia["power.draw"], ("power_average", "power_current"))
        self.assertEqual(nvidia["inforom.oem"], ())

    def test_every_metric_named_is_in_the_catalogue(self):
        for tool in ("nvidia-smi", "pynvml", "amdsmi", "nfd", "rocm-smi"):
            for name, metrics in hipstack.foreign_names(tool).items():
                self.assertLessEqual(set(metrics), self.metrics, f"{tool} {name}")

    def test_unknown_tool(self):
        with self.assertRaises(hipstack.InvalidArgument):
            hipstack.foreign_names("xpu-smi")

    def test_read_once(self):
        self.assertIs(hipstack.foreign_table("pynvml"), hipstack.foreign_table("pynvml"))


if __name__ == "__main__":
    unittest.main()
