// Which Kubernetes container a process is in (docs/deploy-kubernetes.md, "Which pod uses each GPU"):
// the pod UID and container ID from the process's cgroup path, and their names from the kubelet's
// log folders, which name every pod (/var/log/pods/NAMESPACE_POD_UID) and every container
// (/var/log/containers/POD_NAMESPACE_CONTAINER-ID.log) on the node.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hipstack::smid {

struct ContainerRef {
  std::string pod_uid;       // with dashes, as the API server writes it
  std::string container_id;  // 64 hex digits
  std::string runtime;       // "containerd", "cri-o", "docker", "" (cgroupfs driver: not named)
  bool operator==(const ContainerRef&) const = default;
};

// The container of a cgroup path (smi::ProcessInfo::cgroup), for the kubelet's cgroup layouts:
// the systemd driver (kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice/
// cri-containerd-<id>.scope, crio-<id>.scope, docker-<id>.scope) and the cgroupfs driver
// (/kubepods/burstable/pod<uid>/<id>), guaranteed pods without a QoS level, and either nested
// below a prefix (a node in a container). nullopt for any other path (a host process, a pod's
// sandbox, CRI-O's conmon).
std::optional<ContainerRef> parse_container_cgroup(std::string_view path);

struct ContainerName {
  std::string pod;
  std::string namespace_name;
  std::string container;  // "" when only the pod is known
};

// Names by container ID and by pod UID, read from the kubelet's log folders.
struct PodDirectory {
  std::map<std::string, ContainerName, std::less<>> containers;  // container ID -> names
  std::map<std::string, ContainerName, std::less<>> pods;        // pod UID -> pod and namespace
  std::string error;  // why a folder could not be read, "" when both were

  // The names of ref's container: by its ID, else its pod's by UID (container left ""); nullopt
  // when neither is known.
  [[nodiscard]] std::optional<ContainerName> find(const ContainerRef& ref) const;
};

// At most this many entries are read from each folder: a node runs at most a few hundred pods.
inline constexpr std::size_t kPodDirectoryLimit = 65536;

// The names in a folder (not "." entries), at most kPodDirectoryLimit; error (when given) says
// why the folder could not be read or was cut short.
std::vector<std::string> directory_entries(const std::string& dir, std::string* error = nullptr);

// Reads LOG_DIR/pods and LOG_DIR/containers (names only: nothing is opened or followed).
// Entries whose names are not the kubelet's forms are skipped.
PodDirectory read_pod_directory(const std::string& log_dir);

// The parts of a /var/log/containers entry name "POD_NAMESPACE_CONTAINER-ID.log" and of a
// /var/log/pods entry name "NAMESPACE_POD_UID" (Kubernetes names hold no '_').
std::optional<std::pair<std::string, ContainerName>> parse_container_log_name(std::string_view name);
std::optional<std::pair<std::string, ContainerName>> parse_pod_log_name(std::string_view name);

}  // namespace hipstack::smid
