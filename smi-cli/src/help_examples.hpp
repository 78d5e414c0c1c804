// The examples each command's --help ends with (docs/cli.md has the same commands in context).
#pragma once

#include <string>
#include <string_view>

namespace hipstack::cli {

// "Examples:\n  hipstack-smi metric -g 0 -m temperature\n..." for a command ("" for the top level);
// empty for a name that has none.
std::string help_examples(std::string_view command);

}  // namespace hipstack::cli
