// --help that fits the screen (docs/cli.md, "Widths"): every program's and subcommand's help laid
// out by one CLI11 formatter.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace hipstack::cli_docs {

// Names the program `program` in its usage lines (not the path it was started by) and lays out its
// help and every subcommand's to output_width(): descriptions wrapped at spaces in their column, and
// a subcommand's help ending with the options of the program it also takes (given before or after
// the subcommand). Call once every option and subcommand is defined.
void format_help(CLI::App& app, std::string program);

}  // namespace hipstack::cli_docs
