"""Every ctypes Structure of hipstack._capi has the size, field offsets and field sizes of its C struct in
hipstack/smi.h: a C program, generated from the Python declarations and compiled against the header,
prints what the C compiler says. The same for every constant _capi writes down: each equals its C
enumerator or macro, and each C enum of those has all its enumerators in _capi. Environment: HIPSTACK_INCLUDE_DIR (the public headers), CC (default cc)."""
import ctypes
import os
import re
import subprocess
import tempfile
import unittest

from hipstack import _capi


class Layout(unittest.TestCase):
    def test_structs_match_the_header(self):
        lines = ['#include <hipstack/smi.h>', '#include <stddef.h>', '#include <stdio.h>', 'int main(void) {']
        want = []
        for struct in _capi.STRUCTS:
            lines.append(f'  printf("{struct.c_name} %zu\\n", sizeof({struct.c_name}));')
            want.append(f"{struct.c_name} {ctypes.sizeof(struct)}")
            renames = getattr(struct, "c_field_names", {})
            for name, _ in struct._fields_:
                c_field = renames.get(name, name)
                lines.append(f'  printf("{struct.c_name}.{c_field} %zu %zu\\n", offsetof({struct.c_name}, {c_field}), '
                             f'sizeof((({struct.c_name}*)0)->{c_field}));')
                member = getattr(struct, name)
                want.append(f"{struct.c_name}.{c_field} {member.offset} {member.size}")
        lines += ["  return 0;", "}"]
        self.assertEqual(self._run_c(lines), want)
        self.assertGreaterEqual(len(_capi.STRUCTS), 17)

    def test_constants_match_the_header(self):
        pairs = [("API_VERSION", "HIPSTACK_SMI_API_VERSION", _capi.API_VERSION),
                 ("NO_READ_DEADLINE", "HIPSTACK_SMI_NO_READ_DEADLINE", _capi.NO_READ_DEADLINE)]
        for name, value in vars(_capi).items():
            if re.fullmatch(r"(OK|ERROR_\w+|TYPE_\w+|OPEN_\w+|LIST_(?!GETTERS)\w+|CONTROL_DRY_RUN|CONTROL_FORCE)", name):
                pairs.append((name, "HIPSTACK_SMI_" + name, value))
        by_value = {"STATUS_NAMES": "STATUS", "SCOPE_NAMES": "SCOPE", "KIND_NAMES": "KIND", "COST_NAMES": "COST",
                    "VERDICT_NAMES": "VERDICT", "OUTCOME_NAMES": "CONTROL", "FOREIGN_TOOLS": "FOREIGN"}
        header = open(os.path.join(os.environ["HIPSTACK_INCLUDE_DIR"], "hipstack", "smi.h")).read()
        for tuple_name, prefix in by_value.items():
            names = getattr(_capi, tuple_name)
            for value, name in enumerate(names):
                pairs.append((f"{tuple_name}[{value}]", f"HIPSTACK_SMI_{prefix}_" + name.upper().replace("-", "_"), value))
            if prefix != "CONTROL":  # the control enumerators share their prefix with the kinds below
                declared = [d for d in re.findall(rf"\bHIPSTACK_SMI_{prefix}_[A-Z0-9_]+ = ", header)
                            if not d.startswith("HIPSTACK_SMI_FOREIGN_TOOL_MAX_ENUM")]  # the range marker
                self.assertEqual(len(declared), len(names), f"{tuple_name}: smi.h declares {declared}")
        for mapping, prefix in ((_capi.SAMPLE_FLAGS, "SAMPLE"), (_capi.CONTROL_KINDS, "CONTROL")):
            for name, value in mapping.items():
                pairs.append((f"{prefix}:{name}", f"HIPSTACK_SMI_{prefix}_{name.upper()}", value))
        self.assertEqual(len(re.findall(r"\bHIPSTACK_SMI_SAMPLE_[A-Z_]+ = ", header)), len(_capi.SAMPLE_FLAGS))
        self.assertEqual(len(re.findall(r"\bHIPSTACK_SMI_LIST_[A-Z_]+ = ", header)),
                         len([n for n in vars(_capi) if n.startswith("LIST_") and n != "LIST_GETTERS"]))
        self.assertGreater(len(pairs), 60)
        lines = ['#include <hipstack/smi.h>', '#include <stdio.h>', 'int main(void) {']
        lines += [f'  printf("%s %lld\\n", "{python}", (long long)({c}));' for python, c, _ in pairs]
        lines += ["  return 0;", "}"]
        got = self._run_c(lines)
        self.assertEqual(got, [f"{python} {value}" for python, _, value in pairs])

    def _run_c(self, lines):
        """What a C program of these lines, compiled against the public headers, prints: one string a line."""
        with tempfile.TemporaryDirectory() as work:
            source, program = os.path.join(work, "probe.c"), os.path.join(work, "probe")
            with open(source, "w") as f:
                f.write("\n".join(lines) + "\n")
            subprocess.run([os.environ.get("CC", "cc"), "-std=c99", "-Wall", "-Werror", "-I",
                            os.environ["HIPSTACK_INCLUDE_DIR"], source, "-o", program], check=True)
            return subprocess.run([program], check=True, capture_output=True, text=True).stdout.split("\n")[:-1]

    def test_every_list_kind_has_a_getter(self):
        self.assertEqual(sorted(_capi.LIST_GETTERS), list(range(10)))


if __name__ == "__main__":
    unittest.main()
