// "Did you mean": the closest names to a mistyped one (suggest.hpp).
#include "suggest.hpp"

#include <algorithm>
#include <cctype>
#include <functional>

namespace hipstack::cli {
namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// Optimal string alignment distance (Damerau-Levenshtein without repeated edits of one substring),
// case-insensitive: "metirc" is one swap from "metric".
std::size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

bool starts_with(std::string_view text, std::string_view prefix) {
  if (prefix.size() > text.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (lower(text[i]) != lower(prefix[i])) return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> closest_words(std::string_view word, const std::vector<std::string>& candidates, std::size_t limit) {
  if (word.empty() || word.size() > 64) return {};  // nothing to compare, or not a typo of ours
  const std::size_t allowed = std::max<std::size_t>(1, word.size() / 4);
  std::vector<std::pair<std::size_t, std::string>> near;
  std::vector<std::string> prefixed;
  for (const std::string& candidate : candidates) {
    const std::size_t d = distance(word, candidate);
    if (d == 0) continue;
    if (d <= allowed) near.emplace_back(d, candidate);
    else if (word.size() >= 3 && starts_with(candidate, word)) prefixed.push_back(candidate);
  }
  std::stable_sort(near.begin(), near.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  // Of the longer names that begin with the word, the shortest first: the general ones.
  std::stable_sort(prefixed.begin(), prefixed.end(), [](const std::string& x, const std::string& y) { return x.size() < y.size(); });
  std::vector<std::string> out;
  for (auto& [d, candidate] : near) out.push_back(std::move(candidate));
  for (std::string& candidate : prefixed) out.push_back(std::move(candidate));
  if (out.size() > limit) out.resize(limit);
  return out;
}

std::string did_you_mean(const std::vector<std::string>& suggestions) {
  if (suggestions.empty()) return {};
  std::string out = " Did you mean " + suggestions.front();
  for (std::size_t i = 1; i < suggestions.size(); ++i) out += (i + 1 == suggestions.size() ? " or " : ", ") + suggestions[i];
  return out + "?";
}

namespace {

// Another tool's spelling and what hipstack-smi does it with. `after`: only after that command.
struct Habit {
  std::string_view typed;  // a whole word, or a prefix ending in '*'
  std::string_view after;  // "" anywhere
  std::string_view hint;
};

constexpr Habit kHabits[] = {
    {"-L", "", "nvidia-smi -L lists the GPUs: hipstack-smi list"},
    {"--list-gpus", "", "nvidia-smi --list-gpus lists the GPUs: hipstack-smi list"},
    {"-q", "", "nvidia-smi -q prints everything: hipstack-smi static and hipstack-smi metric (-v for the sources)"},
    {"--query", "", "nvidia-smi --query prints everything: hipstack-smi static and hipstack-smi metric (-v for the sources)"},
    {"--query-gpu*", "",
     "nvidia-smi's --query-gpu: hipstack-smi --nvidia-smi --query-gpu=FIELDS --format=csv, or hipstack-smi query -m FIELDS"},
    {"-i", "", "nvidia-smi -i and amd-smi -g pick GPUs: hipstack-smi -g N (index, BDF or UUID)"},
    {"--id*", "", "nvidia-smi --id picks GPUs: hipstack-smi -g N (index, BDF or UUID)"},
    {"dmon", "", "nvidia-smi dmon: hipstack-smi monitor (-w SECONDS between lines, -m METRICS)"},
    {"pmon", "", "nvidia-smi pmon: hipstack-smi process -w SECONDS"},
    {"-d", "monitor", "nvidia-smi dmon -d sets the delay: hipstack-smi monitor -w SECONDS"},
    {"-s", "monitor", "nvidia-smi dmon -s picks metric groups: hipstack-smi monitor -m METRICS,GROUPS (hipstack-smi catalogue)"},
    {"--show*", "", "rocm-smi's --show options: hipstack-smi --rocm-smi --showtemp ... (or hipstack-smi metric)"},
    {"xgmi", "", "amd-smi xgmi: hipstack-smi topology (--list for every pair)"},
    {"firmware", "", "amd-smi firmware: hipstack-smi static -m firmware_version"},
};

bool typed_as(std::string_view arg, std::string_view typed) {
  if (typed.ends_with('*')) return arg.starts_with(typed.substr(0, typed.size() - 1));
  return arg == typed;
}

}  // namespace

std::string foreign_habit(const std::vector<std::string_view>& args, const KnownOption& known) {
  std::string_view command;  // the first word not an option: hipstack-smi's command, or the foreign one
  for (const std::string_view arg : args) {
    if (arg == "--") break;
    const bool option = arg.starts_with("-");
    // Words only in the command's place (a folder named "firmware" is no habit); options only where
    // hipstack-smi has none of that name (process -i is its own).
    if ((option && known(command, arg.substr(0, arg.find('=')))) || (!option && !command.empty())) continue;
    for (const Habit& habit : kHabits) {
      if (typed_as(arg, habit.typed) && (habit.after.empty() || habit.after == command)) return std::string(habit.hint);
    }
    if (!option) command = arg;
  }
  return {};
}

}  // namespace hipstack::cli
