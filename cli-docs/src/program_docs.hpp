// What a program says about itself beyond its CLI11 definition (cli_docs.hpp makes man pages and
// completions of both): its own room, so that the model of an App (cli_docs_model.hpp) and the
// generators can share it without including each other.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace hipstack::cli_docs {

// What a man page says beyond the options and commands: prose the App does not hold.
struct ProgramDocs {
  std::string name;         // "hipstack-smi"
  int section = 1;          // 1 for commands, 8 for daemons
  std::string description;  // DESCRIPTION paragraphs, separated by blank lines
  std::vector<std::pair<std::string, std::string>> exit_status;  // code, meaning
  std::vector<std::string> see_also;                              // "hipstack-info(1)"
  // Words an option's value is completed from ("--metrics" -> the catalogue's names). Options whose
  // validator lists its values (CLI::IsMember) or names a file or folder need no entry.
  std::map<std::string, std::vector<std::string>> value_words;
  std::vector<std::string> comma_lists;  // options whose value is a comma-separated list ("--metrics")
};

}  // namespace hipstack::cli_docs
