// Which Kubernetes container a process is in, from its cgroup path (container_identity.hpp).
#include "container_identity.hpp"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>

namespace hipstack::smid {
namespace {

bool all_of_chars(std::string_view text, std::string_view allowed) {
  return std::all_of(text.begin(), text.end(), [allowed](char c) { return allowed.find(c) != std::string_view::npos; });
}

bool is_container_id(std::string_view text) { return text.size() == 64 && all_of_chars(text, "0123456789abcdef"); }

// A pod UID as the API server writes it: 8-4-4-4-12 hex digits (the systemd driver writes '_' for '-').
std::optional<std::string> pod_uid(std::string_view text) {
  if (text.size() != 36) return std::nullopt;
  std::string uid(text);
  for (std::size_t i = 0; i < uid.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash && (uid[i] == '_' || uid[i] == '-')) uid[i] = '-';
    else if (dash || !all_of_chars(uid.substr(i, 1), "0123456789abcdef")) return std::nullopt;
  }
  return uid;
}

// The pod UID a cgroup folder names: "pod<uid>" (cgroupfs) or "kubepods[-<qos>]-pod<uid>.slice" (systemd).
std::optional<std::string> pod_segment(std::string_view segment) {
  if (segment.starts_with("pod")) return pod_uid(segment.substr(3));
  if (!segment.starts_with("kubepods") || !segment.ends_with(".slice")) return std::nullopt;
  segment.remove_suffix(6);
  const auto at = segment.rfind("-pod");
  return at == std::string_view::npos ? std::nullopt : pod_uid(segment.substr(at + 4));
}

// The container a folder right below a pod's names, with its runtime.
std::optional<std::pair<std::string, std::string>> container_segment(std::string_view segment) {
  struct Form {
    std::string_view prefix, suffix, runtime;
  };
  // CRI-O's conmon (crio-conmon-<id>.scope) is not the container: its prefix does not match.
  static constexpr Form kForms[] = {{"cri-containerd-", ".scope", "containerd"}, {"crio-", ".scope", "cri-o"},
                                    {"docker-", ".scope", "docker"},             {"crio-", "", "cri-o"},
                                    {"", "", ""}};
  for (const Form& form : kForms) {
    if (!segment.starts_with(form.prefix) || !segment.ends_with(form.suffix)) continue;
    const std::string_view id = segment.substr(form.prefix.size(), segment.size() - form.prefix.size() - form.suffix.size());
    if (is_container_id(id)) return std::pair{std::string(id), std::string(form.runtime)};
  }
  return std::nullopt;
}

std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    const auto slash = path.find('/');
    if (slash != 0) out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

// Kubernetes object names: DNS labels and subdomains (lower-case letters, digits, '-', '.').
bool is_object_name(std::string_view text) {
  return !text.empty() && text.size() <= 253 && all_of_chars(text, "abcdefghijklmnopqrstuvwxyz0123456789-.");
}

}  // namespace

std::vector<std::string> directory_entries(const std::string& dir, std::string* error) {
  std::vector<std::string> names;
  const std::unique_ptr<DIR, int (*)(DIR*)> handle(::opendir(dir.c_str()), ::closedir);
  if (!handle) {
    if (error != nullptr) *error = fmt::format("{}: {}", dir, std::strerror(errno));
    return names;
  }
  while (const dirent* entry = ::readdir(handle.get())) {
    if (names.size() == kPodDirectoryLimit) {
      if (error != nullptr) *error = fmt::format("{}: more than {} entries; the rest were not read", dir, kPodDirectoryLimit);
      break;
    }
    if (entry->d_name[0] != '.') names.emplace_back(entry->d_name);
  }
  return names;
}

std::optional<ContainerRef> parse_container_cgroup(std::string_view path) {
  const std::vector<std::string_view> parts = segments(path);
  // The pod folder, and the container folder right below it (crun keeps the processes one level
  // deeper still, which is why the container is not required to be the last folder).
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const auto uid = pod_segment(parts[i]);
    if (!uid) continue;
    const auto container = container_segment(parts[i + 1]);
    if (!container) return std::nullopt;  // the pod's sandbox or conmon: no container of its own
    return ContainerRef{*uid, container->first, container->second};
  }
  return std::nullopt;
}

std::optional<std::pair<std::string, ContainerName>> parse_container_log_name(std::string_view name) {
  if (!name.ends_with(".log")) return std::nullopt;
  name.remove_suffix(4);
  const auto first = name.find('_');
  const auto second = first == std::string_view::npos ? first : name.find('_', first + 1);
  const auto dash = name.rfind('-');
  if (second == std::string_view::npos || dash == std::string_view::npos || dash < second) return std::nullopt;
  ContainerName names{std::string(name.substr(0, first)), std::string(name.substr(first + 1, second - first - 1)),
                      std::string(name.substr(second + 1, dash - second - 1))};
  const std::string_view id = name.substr(dash + 1);
  if (!is_container_id(id) || !is_object_name(names.pod) || !is_object_name(names.namespace_name) ||
      !is_object_name(names.container)) {
    return std::nullopt;
  }
  return std::pair{std::string(id), std::move(names)};
}

std::optional<std::pair<std::string, ContainerName>> parse_pod_log_name(std::string_view name) {
  const auto first = name.find('_');
  const auto last = name.rfind('_');
  if (first == std::string_view::npos || last == first) return std::nullopt;
  const auto uid = pod_uid(name.substr(last + 1));
  ContainerName names{std::string(name.substr(first + 1, last - first - 1)), std::string(name.substr(0, first)), ""};
  if (!uid || !is_object_name(names.pod) || !is_object_name(names.namespace_name)) return std::nullopt;
  return std::pair{*uid, std::move(names)};
}

PodDirectory read_pod_directory(const std::string& log_dir) {
  PodDirectory directory;
  std::string pods_error, containers_error;
  for (const std::string& name : directory_entries(log_dir + "/pods", &pods_error)) {
    if (auto parsed = parse_pod_log_name(name)) directory.pods.insert(std::move(*parsed));
  }
  for (const std::string& name : directory_entries(log_dir + "/containers", &containers_error)) {
    if (auto parsed = parse_container_log_name(name)) directory.containers.insert(std::move(*parsed));
  }
  directory.error = pods_error.empty() ? containers_error
                    : containers_error.empty() ? pods_error
                                               : pods_error + "; " + containers_error;
  return directory;
}

std::optional<ContainerName> PodDirectory::find(const ContainerRef& ref) const {
  if (const auto container = containers.find(ref.container_id); container != containers.end()) return container->second;
  if (const auto pod = pods.find(ref.pod_uid); pod != pods.end()) return pod->second;
  return std::nullopt;
}

}  // namespace hipstack::smid
