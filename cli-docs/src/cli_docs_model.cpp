// The model of a CLI11 App that man pages and completions are made from (cli_docs_model.hpp).
#include "cli_docs_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace hipstack::cli_docs {
namespace detail {
namespace {

// CLI11's type name is "BASE" or "BASE:VALIDATOR" ("TEXT:FILE", "UINT:UINT in [1 - 9]", "TEXT:{a,b}").
void classify_value(const CLI::Option& option, OptionDoc& doc) {
  const std::string type = option.get_type_name();
  const std::size_t colon = type.find(':');
  const std::string base = type.substr(0, colon);
  const std::string check = colon == std::string::npos ? std::string() : type.substr(colon + 1);
  doc.placeholder = base.empty() ? "VALUE" : base;
  doc.value = ValueKind::text;
  if (check == "FILE" || (check.empty() && base == "FILE")) {
    doc.placeholder = "FILE";
    doc.value = ValueKind::file;
  } else if (check == "DIR" || check == "PATH(existing)" || (check.empty() && base == "DIR")) {
    doc.placeholder = "DIR";
    doc.value = ValueKind::directory;
  } else if (check.size() > 2 && check.front() == '{' && check.back() == '}') {
    doc.value = ValueKind::words;
    std::size_t pos = 1;
    while (pos < check.size() - 1) {
      std::size_t end = check.find(',', pos);
      if (end == std::string::npos || end > check.size() - 1) end = check.size() - 1;
      if (end > pos) doc.words.push_back(check.substr(pos, end - pos));
      pos = end + 1;
    }
  }
}

OptionDoc option_doc(const CLI::Option& option, const ProgramDocs& docs) {
  OptionDoc doc;
  doc.short_names = option.get_snames();
  doc.long_names = option.get_lnames();
  if (!option.nonpositional()) doc.positional = option.get_name(true);
  doc.help = option.get_description();
  if (option.get_items_expected_max() > 0) classify_value(option, doc);
  for (const std::string& spelling : doc.spellings()) {
    if (std::find(docs.comma_lists.begin(), docs.comma_lists.end(), spelling) != docs.comma_lists.end()) doc.list = true;
    const auto words = docs.value_words.find(spelling);
    if (words == docs.value_words.end()) continue;
    doc.value = ValueKind::words;
    doc.words = words->second;
  }
  return doc;
}

// A command's options; one the program already has (each command's -h,--help) is said once, there.
CommandDoc command_doc(const CLI::App& app, const ProgramDocs& docs, const CommandDoc* program) {
  CommandDoc doc;
  doc.help = app.get_description();
  doc.footer = app.get_footer();
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_group().empty()) continue;  // hidden
    OptionDoc option_text = option_doc(*option, docs);
    const bool known = program != nullptr && std::any_of(program->options.begin(), program->options.end(), [&](const OptionDoc& o) {
      return o.spellings() == option_text.spellings();
    });
    if (!known) doc.options.push_back(std::move(option_text));
  }
  return doc;
}

}  // namespace

std::vector<std::string> OptionDoc::spellings() const {
  std::vector<std::string> out;
  for (const std::string& name : short_names) out.push_back("-" + name);
  for (const std::string& name : long_names) out.push_back("--" + name);
  return out;
}

Model model_of(const CLI::App& app, const ProgramDocs& docs) {
  Model model;
  model.program = docs.name;
  model.top = command_doc(app, docs, nullptr);
  model.summary = model.top.help;
  if (const std::string prefix = docs.name + ": "; model.summary.rfind(prefix, 0) == 0) {
    model.summary.erase(0, prefix.size());
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;
    CommandDoc command = command_doc(*sub, docs, &model.top);
    command.name = sub->get_name();
    model.commands.push_back(std::move(command));
  }
  return model;
}

std::string identifier(std::string_view program) {
  std::string out;
  for (const char c : program) out += std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '_';
  return out;
}

}  // namespace detail

}  // namespace hipstack::cli_docs
