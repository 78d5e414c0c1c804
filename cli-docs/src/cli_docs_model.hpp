// The part of a CLI11 App that man pages and completions are made from (cli_docs.cpp,
// cli_completions.cpp): the visible options and commands, each option's value kind.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "program_docs.hpp"

namespace hipstack::cli_docs::detail {

enum class ValueKind { none, text, file, directory, words };

struct OptionDoc {
  std::vector<std::string> short_names;  // without the dash: "g"
  std::vector<std::string> long_names;   // without the dashes: "gpu"
  std::string positional;                // a positional argument's name ("OUT"), else ""
  std::string placeholder;               // "TEXT", "FILE", "UINT", ...; "" for a flag
  std::string help;
  ValueKind value = ValueKind::none;
  std::vector<std::string> words;        // ValueKind::words
  bool list = false;                     // the value is a comma-separated list of words

  [[nodiscard]] std::vector<std::string> spellings() const;  // "-g", "--gpu"
};

struct CommandDoc {
  std::string name;  // "" for the program itself
  std::string help;
  std::string footer;  // examples, as --help prints them
  std::vector<OptionDoc> options;
};

struct Model {
  std::string program;
  std::string summary;  // the App's description without its "program: " prefix
  CommandDoc top;
  std::vector<CommandDoc> commands;
};

Model model_of(const CLI::App& app, const ProgramDocs& docs);

// An identifier for shell function names: "hipstack-smi" -> "hipstack_smi".
std::string identifier(std::string_view program);

}  // namespace hipstack::cli_docs::detail
