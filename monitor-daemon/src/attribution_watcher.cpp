// The attribution watcher's thread: asks the kubelet and reads the snapshots' processes
// (attribution_watcher.hpp).
#include "attribution_watcher.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include "snapshot.hpp"
#include "thread_name.hpp"

namespace hipstack::smid {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kCallDeadline{5000};  // each List or Get
constexpr std::size_t kMaxGetsPerLook = 16;                // more new pods than this: one List instead
constexpr std::chrono::milliseconds kRetryFirst{250};      // the first look again after a call failed

struct Changes {
  bool relist = false;  // the socket was re-created (a kubelet restart) or events were lost
  std::vector<ContainerName> created, removed;  // pod folders (pod and namespace)
};

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? std::string("/") : path.substr(0, slash);
}

std::string base_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

void erase_pod(std::vector<ContainerDevices>& held, const ContainerName& pod) {
  std::erase_if(held, [&](const ContainerDevices& c) { return c.pod == pod.pod && c.namespace_name == pod.namespace_name; });
}

}  // namespace

// What the watcher and its thread both hold: the latest attribution, and the thread's stop signal.
struct AttributionWatcher::Shared {
  Shared() : stop_fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (stop_fd < 0) throw std::runtime_error(fmt::format("eventfd: {}", std::strerror(errno)));
  }
  ~Shared() { ::close(stop_fd); }
  Shared(const Shared&) = delete;
  Shared& operator=(const Shared&) = delete;

  const int stop_fd;
  mutable std::mutex mutex;  // guards latest
  std::shared_ptr<const Attribution> latest = std::make_shared<const Attribution>();
};

namespace {

// The kubelet socket's folder and the pod log folder, watched with inotify. Without inotify (its
// limits reached) fd() is -1 and the looks on the timer alone keep the attribution current.
class FolderWatch {
 public:
  FolderWatch(std::string socket, std::string log_dir)
      : socket_(std::move(socket)), log_dir_(std::move(log_dir)), inotify_(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK)) {}
  ~FolderWatch() {
    if (inotify_ >= 0) ::close(inotify_);
  }
  FolderWatch(const FolderWatch&) = delete;
  FolderWatch& operator=(const FolderWatch&) = delete;

  [[nodiscard]] int fd() const { return inotify_; }

  // Watches the socket's folder and the pod log folder; called each look, so that a folder made
  // after start (kubelet installed later) is watched from then on.
  void watch() {
    if (inotify_ < 0) return;
    if (socket_watch_ < 0) socket_watch_ = ::inotify_add_watch(inotify_, parent_of(socket_).c_str(), IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
    if (pods_watch_ < 0) {
      pods_watch_ = ::inotify_add_watch(inotify_, (log_dir_ + "/pods").c_str(),
                                       IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_ONLYDIR);
    }
  }

  // What changed since the last read: pod folders made and removed, the socket re-created.
  Changes read_events() {
    Changes changes;
    alignas(inotify_event) char buffer[16 * 1024];
    for (;;) {
      const ssize_t n = ::read(inotify_, buffer, sizeof buffer);
      if (n <= 0) break;
      for (ssize_t at = 0; at < n;) {
        const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
        const std::string name = event->len > 0 ? std::string(event->name) : std::string();
        if ((event->mask & IN_Q_OVERFLOW) != 0) changes.relist = true;
        if ((event->mask & IN_IGNORED) != 0) {  // the folder went away: watched again once it is back
          if (event->wd == socket_watch_) socket_watch_ = -1;
          if (event->wd == pods_watch_) pods_watch_ = -1;
          continue;
        }
        if (event->wd == socket_watch_ && name == base_of(socket_)) changes.relist = true;
        if (event->wd != pods_watch_) continue;
        const auto pod = parse_pod_log_name(name);
        if (!pod) continue;
        if ((event->mask & (IN_CREATE | IN_MOVED_TO)) != 0) changes.created.push_back(pod->second);
        else changes.removed.push_back(pod->second);
      }
    }
    return changes;
  }

 private:
  std::string socket_, log_dir_;
  int inotify_ = -1, socket_watch_ = -1, pods_watch_ = -1;
};

// The watcher's thread: every look (on the timer, or at a change the folders tell of) asks the
// kubelet, reads the pod folders and the GPUs' processes, matches them and publishes.
class Looker {
 public:
  Looker(std::shared_ptr<AttributionWatcher::Shared> shared, std::shared_ptr<const smi::System> gpus_system,
         std::vector<std::shared_ptr<DeviceState>> gpus, const Config& config)
      : shared_(std::move(shared)), system(std::move(gpus_system)), devices(std::move(gpus)), mode(config.attribution),
        socket(config.kubelet_socket), log_dir(config.kubelet_log_dir), sysfs_root(config.sysfs_root),
        interval(config.attribution_interval), folders(config.kubelet_socket, config.kubelet_log_dir) {}

  void run() {
    name_thread("smid-attrib");
    auto next_look = Clock::now();
    auto next_match = Clock::time_point::max();
    for (;;) {
      // Watched before the look, so that a pod made after the kubelet answered is an event, not
      // missed until the next look on the timer.
      folders.watch();
      const auto now = Clock::now();
      if (now >= next_look) {
        full_look();
        next_look = Clock::now() + interval;
      } else if (now >= next_match) {
        match();
        publish();
      }
      // Until every GPU's identity and partitions are sampled, the held devices are matched
      // again soon (with the kubelet's answer kept: it is not asked again for that).
      next_match = complete ? Clock::time_point::max() : Clock::now() + std::chrono::milliseconds(250);
      if (retry.count() > 0) next_look = std::min(next_look, Clock::now() + retry);
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(std::min(next_look, next_match) - Clock::now());
      pollfd fds[2] = {{shared_->stop_fd, POLLIN, 0}, {folders.fd(), POLLIN, 0}};
      const int ready = ::poll(fds, folders.fd() >= 0 ? 2 : 1, static_cast<int>(std::max<std::int64_t>(0, wait.count())));
      if (ready < 0 && errno != EINTR) return;
      if ((fds[0].revents & POLLIN) != 0) return;
      if (folders.fd() >= 0 && (fds[1].revents & POLLIN) != 0) apply(folders.read_events());
    }
  }

 private:
  [[nodiscard]] bool active() const {
    struct stat st {};
    return mode == Config::Attribution::on || (mode == Config::Attribution::automatic && ::stat(socket.c_str(), &st) == 0);
  }

  // Made when the kubelet is first asked: a channel starts gRPC's threads, which a node without a
  // kubelet does not pay for (docs/performance.md, "Threads that wake with no work").
  KubeletClient& kubelet() {
    if (!client) client = std::make_unique<KubeletClient>(socket, kCallDeadline);
    return *client;
  }

  void publish() {
    auto copy = std::make_shared<const Attribution>(working);
    std::lock_guard lock(shared_->mutex);
    shared_->latest = std::move(copy);
  }

  // complete: every GPU has had its first slow sample (identity, partitions) to match by.
  std::vector<GpuKeys> keys() {
    const auto xcp = xcp_platform_devices(sysfs_root);
    std::vector<GpuKeys> out;
    complete = true;
    for (const auto& state : devices) {
      std::shared_ptr<const DeviceSnapshot> snapshot;
      {
        std::lock_guard lock(state->mutex);
        snapshot = state->snapshot;
      }
      if (!snapshot) continue;
      complete = complete && snapshot->slow != SlowSample::none();
      out.push_back(gpu_keys(snapshot->device, snapshot->facts(), snapshot->partitions(), xcp));
    }
    return out;
  }

  void list_kubelet() {
    try {
      held = kubelet().list();
      held_dropped = cap_held(held);
      retry = std::chrono::milliseconds(0);
      working.kubelet_ok = true;
      working.kubelet_error.clear();
      working.kubelet_at = std::chrono::system_clock::now();
    } catch (const std::exception& e) {
      // No answer: the holders are not known now, rather than the last ones shown as current.
      held.clear();
      held_dropped = 0;
      working.kubelet_ok = false;
      working.kubelet_error = e.what();
      // Asked again soon, then less and less often, up to the interval: a kubelet that was
      // starting when its socket appeared answers within a second or two.
      retry = std::min(std::max(retry * 2, kRetryFirst), interval);
    }
  }

  void match() {
    working.holders.clear();
    working.unmatched.clear();
    held_dropped += cap_held(held);  // Gets add to what List gave
    if (held_dropped != working.kubelet_dropped && held_dropped > 0) {
      std::fprintf(stderr, "hipstack-smid: the kubelet lists more than %zu containers or %zu devices in one: %zu devices not attributed\n",
                   kMaxHeldContainers, kMaxDevicesPerContainer, held_dropped);
    }
    working.kubelet_dropped = held_dropped;
    match_holders(held, keys(), working);
  }

  void scan_processes(const PodDirectory& directory) {
    working.containers.clear();
    for (const auto& state : devices) {
      std::shared_ptr<const DeviceSnapshot> snapshot;
      {
        std::lock_guard lock(state->mutex);
        snapshot = state->snapshot;
      }
      if (!snapshot || !snapshot->device.fault.empty()) continue;
      try {
        const auto processes = system->processes(snapshot->device.index);
        for (ContainerUse& use : container_use(snapshot->device.index, processes, directory)) working.containers.push_back(std::move(use));
      } catch (const std::exception&) {
        continue;  // the GPU went away between the snapshot and the scan: the next look says so
      }
    }
    working.processes = true;
    working.processes_at = std::chrono::system_clock::now();
  }

  void full_look() {
    if (!active()) {
      complete = true;  // nothing to match: the next look is on the timer
      held.clear();
      held_dropped = 0;
      working = Attribution{};
      working.looked_at = std::chrono::system_clock::now();
      publish();
      return;
    }
    working.looked_at = std::chrono::system_clock::now();
    working.kubelet = true;
    list_kubelet();
    const PodDirectory directory = read_pod_directory(log_dir);
    working.directory_error = directory.error;
    match();
    scan_processes(directory);
    publish();
  }

  void apply(const Changes& changes) {
    if (!active()) return;
    if (!working.kubelet) return full_look();  // the kubelet came since the last look: a whole look now
    // Once the kubelet has said it offers no Get, each new pod is a List; so are many new pods at
    // once. Otherwise each new pod is a Get, all at once within one deadline; a Get that fails
    // (slow, refused) leaves the pods to a List in a look of its own, soon: a slow kubelet holds a
    // look up for one call deadline at most.
    bool relist = changes.relist || (kubelet().unimplemented() && !changes.created.empty()) || changes.created.size() > kMaxGetsPerLook;
    if (!relist && !changes.created.empty()) {
      std::vector<PodName> pods;
      for (const ContainerName& pod : changes.created) pods.push_back({pod.pod, pod.namespace_name});
      const std::vector<PodAnswer> answers = kubelet().get_all(pods);
      bool failed = false;
      for (std::size_t i = 0; i < answers.size(); ++i) {
        if (!answers[i].error.empty()) {
          failed = true;
          continue;
        }
        erase_pod(held, changes.created[i]);
        if (answers[i].found) held.insert(held.end(), answers[i].found->begin(), answers[i].found->end());
        working.kubelet_at = std::chrono::system_clock::now();
      }
      if (failed && kubelet().unimplemented()) {
        relist = true;  // Get not offered (a quick answer): List tells the same and more, now
      } else if (failed) {
        retry = kRetryFirst;
      }
    }
    for (const ContainerName& pod : changes.removed) erase_pod(held, pod);
    if (changes.relist) client.reset();  // a new kubelet: a new connection at the next call
    if (relist) list_kubelet();
    const PodDirectory directory = read_pod_directory(log_dir);
    working.directory_error = directory.error;
    for (ContainerUse& use : working.containers) use.name = directory.find(use.ref);
    match();
    publish();
  }

  std::shared_ptr<AttributionWatcher::Shared> shared_;
  std::shared_ptr<const smi::System> system;
  std::vector<std::shared_ptr<DeviceState>> devices;
  Config::Attribution mode{};
  std::string socket, log_dir, sysfs_root;
  std::chrono::milliseconds interval{};
  std::unique_ptr<KubeletClient> client;  // null until kubelet() first makes it
  FolderWatch folders;
  std::vector<ContainerDevices> held;  // the kubelet's last answer, kept up to date by Get
  std::size_t held_dropped = 0;        // what the caps left out of it (cap_held)
  Attribution working;
  bool complete = false;  // the last match had every GPU's identity and partitions
  std::chrono::milliseconds retry{0};  // after a call that failed: when to look again (0: on the timer)
};

}  // namespace

AttributionWatcher::AttributionWatcher(std::shared_ptr<const smi::System> system, std::vector<std::shared_ptr<DeviceState>> devices,
                                       const Config& config)
    : shared_(std::make_shared<Shared>()) {
  auto looker = std::make_unique<Looker>(shared_, std::move(system), std::move(devices), config);
  std::thread([looker = std::move(looker)] { looker->run(); }).detach();
}

AttributionWatcher::~AttributionWatcher() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(shared_->stop_fd, &one, sizeof one);
}

std::shared_ptr<const Attribution> AttributionWatcher::latest() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->latest;
}

}  // namespace hipstack::smid
