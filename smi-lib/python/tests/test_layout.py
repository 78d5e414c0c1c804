"""Every ctypes Structure of hipstack._capi has the size, field offsets and field sizes of its C struct in
hipstack/smi.h: a C program, generated from the Python declarations and compiled against the header,
prints what the C compiler says. Environment: HIPSTACK_INCLUDE_DIR (the public headers), CC (default cc)."""
import ctypes
import os
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
        with tempfile.TemporaryDirectory() as work:
            source, program = os.path.join(work, "layout.c"), os.path.join(work, "layout")
            with open(source, "w") as f:
                f.write("\n".join(lines) + "\n")
            subprocess.run([os.environ.get("CC", "cc"), "-std=c99", "-Wall", "-Werror", "-I",
                            os.environ["HIPSTACK_INCLUDE_DIR"], source, "-o", program], check=True)
            got = subprocess.run([program], check=True, capture_output=True, text=True).stdout.split("\n")[:-1]
        self.assertEqual(got, want)
        self.assertGreaterEqual(len(_capi.STRUCTS), 17)

    def test_every_list_kind_has_a_getter(self):
        self.assertEqual(sorted(_capi.LIST_GETTERS), list(range(10)))


if __name__ == "__main__":
    unittest.main()
