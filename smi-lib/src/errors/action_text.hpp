// How a message names the action it calls for ("...; action: reset_gpu"): written by the errors.recent
// finding and CPER events, read back by finding_action and event_action (one format, one place).
#pragma once

#include <hipstack/gpu_errors.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace hipstack::smi::detail {

inline constexpr std::string_view kActionMark = "; action: ";

inline std::string with_action(std::string_view text, ErrorAction action) {
  return std::string(text) + std::string(kActionMark) + std::string(error_action_name(action));
}

// The action after the last mark, when the message ends with one's name.
inline std::optional<ErrorAction> action_named_in(std::string_view message) {
  const auto at = message.rfind(kActionMark);
  if (at == std::string_view::npos) return std::nullopt;
  return find_error_action(message.substr(at + kActionMark.size()));
}

}  // namespace hipstack::smi::detail
