// --help that fits the screen: CLI11's formatter with widths from text_layout (help_format.hpp).
#include "help_format.hpp"

#include <memory>
#include <string_view>

#include "text_layout.hpp"

namespace hipstack::cli_docs {
namespace {

class WrappingFormatter final : public CLI::Formatter {
 public:
  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    return entry(make_option_name(opt, is_positional) + make_option_opts(opt), make_option_desc(opt));
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    return entry(sub->get_display_name(true), sub->get_description());
  }
  std::string make_description(const CLI::App* app) const override {
    return paragraphs(CLI::Formatter::make_description(app), "", 0);
  }
  std::string make_footer(const CLI::App* app) const override {
    std::string inherited;
    if (const CLI::App* parent = app->get_parent(); parent != nullptr) {
      for (const CLI::Option* opt : parent->get_options()) {
        // The program's own group only: not hidden ones, other groups (modes that replace the
        // commands, as hipstack-smi's compatibility options) or what is about the program itself.
        if (opt->get_group() != "Options" || opt == parent->get_help_ptr() ||
            opt == parent->get_help_all_ptr() || opt->check_lname("version")) {
          continue;
        }
        inherited += make_option(opt, false);
      }
      if (!inherited.empty()) {
        inherited = paragraphs(parent->get_name() + "'s options, which " + app->get_name() +
                                          " takes too (before or after it):",
                                      "", 0) +
                    inherited + "\n";
      }
    }
    return inherited + CLI::Formatter::make_footer(app);
  }

 private:
  // "  NAME   description..." with the description wrapped in its column; a name as wide as the
  // column puts the description on the next line, as CLI11 does.
  std::string entry(const std::string& name, const std::string& description) const {
    const std::string shown = "  " + name;
    if (description.empty()) return shown + "\n";
    const std::size_t column = get_column_width();
    if (hipstack::cli::display_width(shown) + 1 > column) return shown + "\n" + paragraphs(description, std::string(column, ' '), column);
    return paragraphs(description, shown + std::string(column - hipstack::cli::display_width(shown), ' '), column);
  }
  // Each line of `text` wrapped to the screen, the first starting with `first`, the rest indented.
  static std::string paragraphs(std::string_view text, const std::string& first, std::size_t indent) {
    const std::size_t width = hipstack::cli::output_width();
    std::string out;
    bool begin = true;
    while (!text.empty()) {
      const std::size_t end = text.find('\n');
      const std::string_view line = text.substr(0, end);
      out += hipstack::cli::hanging_lines(begin ? first : std::string(indent, ' '), line, indent, width);
      begin = false;
      text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    }
    return out;
  }
};

void use_formatter(CLI::App& app, const std::shared_ptr<CLI::FormatterBase>& formatter) {
  app.formatter(formatter);
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) use_formatter(*sub, formatter);
}

}  // namespace

void format_help(CLI::App& app, std::string program) {
  app.name(std::move(program));
  use_formatter(app, std::make_shared<WrappingFormatter>());
}

}  // namespace hipstack::cli_docs
