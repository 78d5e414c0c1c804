// The examples each command's --help ends with (docs/cli.md has the same commands in context), and
// the prose of hipstack-smi's man page.
#pragma once

#include <string>
#include <string_view>

#include "cli_docs.hpp"

namespace hipstack::cli {

// "Examples:\n  hipstack-smi metric -g 0 -m temperature\n..." for a command ("" for the top level);
// empty for a name that has none.
std::string help_examples(std::string_view command);

// What hipstack-smi's man page says beyond its options: description, exit status, -m's words.
cli_docs::ProgramDocs smi_program_docs();

}  // namespace hipstack::cli
