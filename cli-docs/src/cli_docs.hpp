// Man pages and shell completions (bash, zsh, fish) generated from a program's CLI11 definition, so
// they cannot drift from --help: each program answers `--generate-docs KIND` with one of them, and the
// build installs what that prints (docs/cli.md, "Man pages and completion").
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "program_docs.hpp"

namespace hipstack::cli_docs {

std::string man_page(const CLI::App& app, const ProgramDocs& docs, std::string_view version);
std::string bash_completion(const CLI::App& app, const ProgramDocs& docs);
std::string zsh_completion(const CLI::App& app, const ProgramDocs& docs);
std::string fish_completion(const CLI::App& app, const ProgramDocs& docs);

// `PROGRAM --generate-docs KIND` (the first arguments), looked for before parsing so that the option
// is in no help text and no completion: the exit code once the document is printed (0; 1 when stdout
// could not be written; 2 for an unknown KIND, named on stderr), or nothing when not asked for.
// DOCS is made only when asked for.
std::optional<int> answer(int argc, char** argv, const CLI::App& app, ProgramDocs (*docs)(), std::string_view version);

}  // namespace hipstack::cli_docs
