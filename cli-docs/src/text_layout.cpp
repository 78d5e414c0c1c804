// Text that fits the screen: display widths, wrapping and cutting by terminal columns
// (text_layout.hpp).
#include "text_layout.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>


namespace hipstack::cli {
namespace {

constexpr std::size_t kPipeWidth = 80;
constexpr std::size_t kNarrowest = 40;  // below this no table is readable: lay out for 40

bool continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The byte offset after the first `columns` characters of `text` (its size when shorter).
std::size_t offset_of_column(std::string_view text, std::size_t columns) {
  std::size_t i = 0;
  for (std::size_t shown = 0; i < text.size(); ++i) {
    if (!continuation_byte(text[i])) {
      if (shown == columns) break;
      ++shown;
    }
  }
  return i;
}

// The byte offset where the last `columns` characters of `text` start.
std::size_t offset_of_last_columns(std::string_view text, std::size_t columns) {
  const std::size_t total = display_width(text);
  return columns >= total ? 0 : offset_of_column(text, total - columns);
}

// Lines of `text` broken at spaces: the first at most `first_columns` wide, the others `columns`.
std::vector<std::string> wrap(std::string_view text, std::size_t first_columns, std::size_t columns) {
  std::vector<std::string> lines(1);
  std::size_t room = std::max<std::size_t>(first_columns, 1);
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t space = text.find(' ', pos);
    std::string_view word = text.substr(pos, space == std::string_view::npos ? std::string_view::npos : space - pos);
    pos = space == std::string_view::npos ? text.size() : space + 1;
    if (word.empty()) continue;
    while (!word.empty()) {
      std::string& line = lines.back();
      const std::size_t used = display_width(line);
      const std::size_t need = display_width(word) + (line.empty() ? 0 : 1);
      if (used + need <= room) {
        if (!line.empty()) line += ' ';
        line += word;
        word = {};
      } else if (line.empty()) {  // longer than a whole line: after a comma or slash, else inside
        std::size_t split = offset_of_column(word, room);
        if (const std::size_t mark = word.substr(0, split).find_last_of(",/"); mark != std::string_view::npos && mark > 0) {
          split = mark + 1;
        }
        line += word.substr(0, split);
        word.remove_prefix(split);
        lines.emplace_back();
        room = std::max<std::size_t>(columns, 1);
      } else {
        lines.emplace_back();
        room = std::max<std::size_t>(columns, 1);
      }
    }
  }
  if (lines.size() > 1 && lines.back().empty()) lines.pop_back();
  return lines;
}

}  // namespace

std::size_t display_width(std::string_view text) noexcept {
  std::size_t width = 0;
  for (const char c : text) width += continuation_byte(c) ? 0 : 1;
  return width;
}

std::size_t output_width() noexcept {
  if (const char* columns = std::getenv("COLUMNS"); columns != nullptr && *columns != '\0') {
    std::size_t value = 0;
    const char* end = columns + std::strlen(columns);
    const auto [ptr, ec] = std::from_chars(columns, end, value);
    if (ec == std::errc() && ptr == end && value >= kNarrowest && value <= 10000) return value;
  }
  winsize size{};
  if (::isatty(STDOUT_FILENO) == 1 && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    return std::max<std::size_t>(size.ws_col, kNarrowest);
  }
  return kPipeWidth;
}

std::string cut_end(std::string_view text, std::size_t columns) {
  if (display_width(text) <= columns) return std::string(text);
  if (columns == 0) return {};
  return std::string(text.substr(0, offset_of_column(text, columns - 1))) + "…";
}

std::string cut_middle(std::string_view text, std::size_t columns) {
  if (display_width(text) <= columns) return std::string(text);
  if (columns < 3) return cut_end(text, columns);
  const std::size_t tail = (columns - 1) / 2;
  const std::size_t head = columns - 1 - tail;
  return std::string(text.substr(0, offset_of_column(text, head))) + "…" +
         std::string(text.substr(offset_of_last_columns(text, tail)));
}

std::vector<std::string> wrap_words(std::string_view text, std::size_t columns) { return wrap(text, columns, columns); }

std::string hanging_lines(std::string_view first, std::string_view text, std::size_t indent, std::size_t width) {
  const std::size_t lead = display_width(first);
  const std::size_t first_room = width > lead ? width - lead : 1;
  const std::size_t room = width > indent ? width - indent : 1;
  std::string out(first);
  bool later = false;
  for (const std::string& line : wrap(text, first_room, room)) {
    if (later) out += '\n' + std::string(indent, ' ');
    out += line;
    later = true;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();  // an empty text after an indent
  return out + '\n';
}

}  // namespace hipstack::cli
