// "Did you mean": the known words closest to a mistyped one (a command, an option, a metric).
#pragma once

#include <functional>
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

// Whether hipstack-smi knows `option` ("-i", "--id") after `command` ("" before any command).
using KnownOption = std::function<bool(std::string_view command, std::string_view option)>;

// A command line that failed to parse and holds another tool's spelling (nvidia-smi's -L, -q,
// --query-gpu, -i, dmon, pmon, dmon's -d and -s; rocm-smi's --show*; amd-smi's xgmi and firmware) where
// hipstack-smi has no such word: one line naming what hipstack-smi does it with. Empty when there is
// none. `args` excludes the program name.
std::string foreign_habit(const std::vector<std::string_view>& args, const KnownOption& known);

}  // namespace hipstack::cli
