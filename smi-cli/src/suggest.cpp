#include "suggest.hpp"

#include <algorithm>
#include <cctype>

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

}  // namespace hipstack::cli
