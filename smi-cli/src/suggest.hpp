// "Did you mean": the known words closest to a mistyped one (a command, an option, a metric).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hipstack::cli {

// Up to `limit` candidates, closest first: those within a small edit distance (insertions,
// deletions, substitutions, swaps of neighbours; at most a quarter of the word, at least 1) and,
// after them, those that start with the word (shortest first). Empty when nothing is close.
std::vector<std::string> closest_words(std::string_view word, const std::vector<std::string>& candidates, std::size_t limit = 4);

// " Did you mean X?" / " Did you mean X, Y or Z?"; empty for no suggestions.
std::string did_you_mean(const std::vector<std::string>& suggestions);

}  // namespace hipstack::cli
