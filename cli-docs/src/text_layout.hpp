// Text that fits the screen: the width tables are laid out for, and the cutting and wrapping of
// cells and lines at character (not byte) and word boundaries. docs/cli.md, "Widths".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hipstack::cli {

// Columns a UTF-8 text takes on a terminal (each code point one column: no wide characters here).
std::size_t display_width(std::string_view text) noexcept;

// The width views are laid out for: $COLUMNS when it is a number (40 or more), else the terminal's
// width when stdout is one, else 80 (a pipe, a file).
std::size_t output_width() noexcept;

// `text` cut to at most `columns` display columns, its end replaced by "…" when cut.
std::string cut_end(std::string_view text, std::size_t columns);
// `text` cut to at most `columns` columns by replacing its middle with "…": both ends stay, where
// identifiers differ (UUIDs sharing a vendor prefix, partition ids ending in /N).
std::string cut_middle(std::string_view text, std::size_t columns);
// `text` in lines of at most `columns` columns, broken at spaces; a word longer than a line is
// broken after its last comma or slash that fits (CPU lists, paths), else inside. At least one line.
std::vector<std::string> wrap_words(std::string_view text, std::size_t columns);
// `text` wrapped to `width`: the first line starts with `first`, the others with `indent` spaces.
std::string hanging_lines(std::string_view first, std::string_view text, std::size_t indent, std::size_t width);

}  // namespace hipstack::cli
