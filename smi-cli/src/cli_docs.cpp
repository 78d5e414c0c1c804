#include "cli_docs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cli_docs_model.hpp"

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

namespace {

using detail::CommandDoc;
using detail::Model;
using detail::OptionDoc;

// Text as roff reads it literally: backslashes escaped, a line never starting a request.
std::string roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = c == '\n';
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
  }
  return out;
}

void man_options(std::string& out, const std::vector<OptionDoc>& options) {
  for (const OptionDoc& option : options) {
    out += ".TP\n";
    std::string names;
    for (const std::string& spelling : option.spellings()) names += (names.empty() ? "" : ", ") + fmt::format("\\fB{}\\fR", roff(spelling));
    if (!option.positional.empty()) names = fmt::format("\\fI{}\\fR", roff(option.positional));
    else if (!option.placeholder.empty()) names += fmt::format(" \\fI{}\\fR", roff(option.placeholder));
    out += names + "\n" + roff(option.help) + "\n";
  }
}

// A footer ("Examples:" and indented lines) as a literal block; under EXAMPLES without its title.
void man_footer(std::string& out, std::string_view footer, bool titled) {
  constexpr std::string_view kTitle = "Examples:\n";
  if (!titled && footer.starts_with(kTitle)) footer.remove_prefix(kTitle.size());
  if (footer.empty()) return;
  out += ".PP\n.nf\n" + roff(footer) + "\n.fi\n";
}

}  // namespace

std::string man_page(const CLI::App& app, const ProgramDocs& docs, std::string_view version) {
  const Model model = detail::model_of(app, docs);
  std::string upper = model.program;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  // No date: the page is the same for every build of one release (reproducible packages).
  std::string out = fmt::format(
      ".\\\" Generated by `{0} --generate-docs man` from the program's own option definitions; do not edit.\n"
      ".TH {1} {2} \"\" \"hipstack {3}\" \"hipstack manual\"\n.SH NAME\n{4} \\- {5}\n.SH SYNOPSIS\n.B {4}\n",
      model.program, upper, docs.section, roff(version), roff(model.program), roff(model.summary));
  out += model.commands.empty() ? "[\\fIOPTIONS\\fR]\n" : "[\\fIOPTIONS\\fR] [\\fICOMMAND\\fR [\\fICOMMAND OPTIONS\\fR]]\n";
  if (!docs.description.empty()) out += ".SH DESCRIPTION\n" + roff(docs.description) + "\n";
  out += ".SH OPTIONS\n";
  man_options(out, model.top.options);
  if (!model.commands.empty()) {
    out += ".SH COMMANDS\nOptions above are accepted before or after the command.\n";
    for (const CommandDoc& command : model.commands) {
      out += fmt::format(".SS {}\n{}\n", roff(command.name), roff(command.help));
      man_options(out, command.options);
      man_footer(out, command.footer, true);
    }
  }
  if (!model.top.footer.empty()) {
    out += ".SH EXAMPLES\n";
    man_footer(out, model.top.footer, false);
  }
  if (!docs.exit_status.empty()) {
    out += ".SH EXIT STATUS\n";
    for (const auto& [code, meaning] : docs.exit_status) out += fmt::format(".TP\n.B {}\n{}\n", roff(code), roff(meaning));
  }
  if (!docs.see_also.empty()) {
    out += ".SH SEE ALSO\n";
    for (std::size_t i = 0; i < docs.see_also.size(); ++i) {
      const std::string& page = docs.see_also[i];
      const std::size_t paren = page.find('(');
      out += fmt::format(".BR {} {}{}\n", roff(page.substr(0, paren)), paren == std::string::npos ? "" : page.substr(paren),
                         i + 1 < docs.see_also.size() ? "," : "");
    }
  }
  return out;
}

std::optional<int> answer(int argc, char** argv, const CLI::App& app, ProgramDocs (*make_docs)(),
                          std::string_view version) {
  if (argc < 2 || std::string_view(argv[1]) != "--generate-docs") return std::nullopt;
  const ProgramDocs docs = make_docs();
  const std::string_view kind = argc > 2 ? argv[2] : "";
  std::string text;
  if (kind == "man") text = man_page(app, docs, version);
  else if (kind == "bash") text = bash_completion(app, docs);
  else if (kind == "zsh") text = zsh_completion(app, docs);
  else if (kind == "fish") text = fish_completion(app, docs);
  if (text.empty()) {
    std::fprintf(stderr, "%s: --generate-docs: \"%.*s\" is not one of man, bash, zsh, fish\n", docs.name.c_str(),
                 static_cast<int>(kind.size()), kind.data());
    return 2;
  }
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    std::fprintf(stderr, "%s: cannot write the output: %s\n", docs.name.c_str(), std::strerror(errno));
    return 1;
  }
  return 0;
}

}  // namespace hipstack::cli_docs
