// hipstack-smi's commands, declared once (name, summary, whether a daemon answers it, the examples
// its --help ends with: docs/cli.md has them in context), and the prose of hipstack-smi's man page.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "cli_docs.hpp"

namespace hipstack::cli {

struct CommandInfo {
  std::string_view name;     // "" is the default view (no command)
  std::string_view summary;  // one line for --help, the man page and completions
  bool remote = false;       // reads through a DeviceSource: also answered by hipstack-smid (--host, local daemon)
  std::array<std::string_view, 3> examples;  // "" when fewer
};

const CommandInfo* find_command(std::string_view name);  // nullptr for an unknown name
// "list, static, ... and event": what --host serves, for its refusal message.
std::string remote_command_names();

// "Examples:\n  hipstack-smi metric -g 0 -m temperature\n..." for a command ("" for the top level);
// empty for a name that has none.
std::string help_examples(std::string_view command);

// What hipstack-smi's man page says beyond its options: description, exit status, -m's words.
cli_docs::ProgramDocs smi_program_docs();

}  // namespace hipstack::cli
