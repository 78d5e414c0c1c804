// KFD SMI events: the line parser and the per-GPU subscriptions (kfd_smi_events.hpp).
#include "kfd_smi_events.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "../../fs_view.hpp"
#include "../../parse.hpp"
#include "../../readings.hpp"

namespace hipstack::smi::detail::amdgpu {
namespace {

// The kernel's interface (include/uapi/linux/kfd_ioctl.h, KFD ioctl 1.3+, Linux 5.11+). Not included:
// that header needs the kernel's drm/drm.h, which Debian ships under another path.
struct KfdSmiEventsArgs {
  std::uint32_t gpuid;    // to the KFD
  std::uint32_t anon_fd;  // from the KFD
};
constexpr unsigned long kIocSmiEvents = _IOWR('K', 0x1F, KfdSmiEventsArgs);  // AMDKFD_IOC_SMI_EVENTS
enum : std::uint64_t {  // enum kfd_smi_event
  kEventVmFault = 1,
  kEventThermalThrottle = 2,
  kEventGpuPreReset = 3,
  kEventGpuPostReset = 4,
  // 5..11 (migrations, page faults, queue eviction and restore, unmap) and 12..13 (process start and
  // end, 6.x) are per-process profiling events hipstack does not subscribe to.
  kLastEventId = 13,
};
constexpr std::uint64_t mask_of(std::uint64_t id) { return std::uint64_t{1} << (id - 1); }  // KFD_SMI_EVENT_MASK_FROM_INDEX

// What hipstack subscribes to: the four kinds of kKfdEventKinds. Not KFD_SMI_EVENT_ALL_PROCESS (64):
// these four are reported to every subscriber; the flag only widens the per-process profiling events.
constexpr std::uint64_t kSubscribedMask =
    mask_of(kEventVmFault) | mask_of(kEventThermalThrottle) | mask_of(kEventGpuPreReset) | mask_of(kEventGpuPostReset);

// Where a device root keeps a GPU's stream (the live system has the ioctl instead).
constexpr const char* kStandInFolder = "/dev/kfd-smi-events";

std::optional<std::pair<std::string_view, std::string_view>> split_once(std::string_view text, char separator) {
  const auto at = text.find(separator);
  if (at == std::string_view::npos) return std::nullopt;
  return std::pair{text.substr(0, at), text.substr(at + 1)};
}

std::optional<KfdSmiEvent> fail(std::string& error, std::string message) {
  error = std::move(message);
  return std::nullopt;
}

}  // namespace

std::optional<KfdSmiEvent> parse_kfd_smi_line(std::string_view line, std::string& error) {
  const auto head = split_once(line, ' ');
  if (!head) return fail(error, "no space after the event id");
  const auto id = parse_hex(head->first);
  if (!id || *id == 0 || *id > kLastEventId) {
    return fail(error, fmt::format("event id \"{}\" is not one the kernel defines (1..{:x}, hex)", head->first, std::uint64_t{kLastEventId}));
  }
  const std::string_view payload = head->second;
  KfdSmiEvent event;
  event.id = static_cast<int>(*id);
  switch (*id) {
    case kEventVmFault: {  // "%x:%s": pid in hex, the task's name (which may hold ':')
      const auto parts = split_once(payload, ':');
      const auto pid = parts ? parse_hex(parts->first) : std::nullopt;
      if (!pid) return fail(error, "VM fault: not PID:TASK with PID in hex");
      event.description = fmt::format("VM fault in process {} ({})", *pid, parts->second);
      return event;
    }
    case kEventThermalThrottle: {  // "%llx:%llx": throttle bit mask, the SMU's throttle counter
      const auto parts = split_once(payload, ':');
      const auto mask = parts ? parse_hex(parts->first) : std::nullopt;
      const auto counter = parts ? parse_hex(parts->second) : std::nullopt;
      if (!mask || !counter) return fail(error, "thermal throttle: not MASK:COUNTER in hex");
      event.description = fmt::format("thermal throttling: reasons {:#x}, throttle counter {}", *mask, *counter);
      return event;
    }
    case kEventGpuPreReset:
    case kEventGpuPostReset: {  // "%x %s": reset sequence number in hex, the cause (6.3+)
      const auto parts = split_once(payload, ' ');
      const auto sequence = parse_hex(parts ? parts->first : payload);
      if (!sequence) return fail(error, "GPU reset: not SEQUENCE [CAUSE] with SEQUENCE in hex");
      const std::string_view cause = parts ? parts->second : std::string_view{};
      event.description = fmt::format("GPU reset {} {}{}{}", *sequence, *id == kEventGpuPreReset ? "starting" : "done",
                                      cause.empty() ? "" : ": ", cause);
      return event;
    }
    default:
      return event;  // a kind hipstack does not subscribe to
  }
}

struct KfdEventWatch::Stream {
  int fd = -1;
  std::uint64_t gpu_id = 0;
  bool device_wide = false;  // the GPU's first node: throttling and resets are reported on every node
  std::string carry;
  bool skipping = false;
  ~Stream() {
    if (fd >= 0) ::close(fd);
  }
};

struct KfdEventWatch::Device {
  std::mutex mutex;
  std::vector<std::uint64_t> gpu_ids;
  std::vector<std::unique_ptr<Stream>> streams;
  std::string unavailable;  // why no stream opened ("" when one did)
  bool try_again = true;    // no stream yet, and only because a path was absent (not a refusal)
  int error_code = 0;
  std::string source;       // "AMDKFD_IOC_SMI_EVENTS" or the stand-in folder's host path
  std::chrono::system_clock::time_point since;
  std::array<std::int64_t, kKfdEventKinds.size()> counts{};
  std::array<std::string, kKfdEventKinds.size()> last{};
  std::int64_t malformed = 0;
  std::string last_problem;  // the latest malformed line or failed read
};

KfdEventWatch::KfdEventWatch(const FsView& fs, std::vector<std::vector<std::uint64_t>> gpu_ids) : fs_(fs) {
  for (auto& ids : gpu_ids) {
    devices_.push_back(std::make_unique<Device>());
    devices_.back()->gpu_ids = std::move(ids);
  }
}

KfdEventWatch::~KfdEventWatch() = default;

bool KfdEventWatch::opened_live_kfd() const {
  const std::lock_guard lock(live_mutex_);
  return live_opened_;
}

void KfdEventWatch::open_streams(Device& device) {
  device.since = std::chrono::system_clock::now();
  const bool live = fs_.host_path("/dev/kfd") == "/dev/kfd" && fs_.host_path("/sys") == "/sys";
  device.source = live ? "AMDKFD_IOC_SMI_EVENTS" : fs_.host_path(kStandInFolder);
  int first_error = 0;
  std::string first_problem;
  bool only_absent = true;  // every failure was a path that does not exist (yet)
  for (std::size_t i = 0; i < device.gpu_ids.size(); ++i) {
    auto stream = std::make_unique<Stream>();
    stream->gpu_id = device.gpu_ids[i];
    stream->device_wide = i == 0;
    std::string problem;
    int error = 0;
    if (live) {
      const int kfd = ::open("/dev/kfd", O_RDWR | O_CLOEXEC);
      if (kfd < 0) {
        error = errno;
        problem = fmt::format("/dev/kfd: {}", std::strerror(error));
        only_absent = only_absent && error == ENOENT;
      } else {
        {
          const std::lock_guard lock(live_mutex_);
          live_opened_ = true;  // opening /dev/kfd made this program a KFD process
        }
        KfdSmiEventsArgs args{};
        args.gpuid = static_cast<std::uint32_t>(stream->gpu_id);
        if (::ioctl(kfd, kIocSmiEvents, &args) != 0) {
          error = errno == ENOTTY || errno == EINVAL ? ENOENT : errno;  // a kernel before 5.11 has no SMI events
          problem = fmt::format("AMDKFD_IOC_SMI_EVENTS (gpu_id {}): {}", stream->gpu_id, std::strerror(errno));
          only_absent = false;
        } else {
          stream->fd = static_cast<int>(args.anon_fd);
          // The kernel makes the file without close-on-exec (a program this one starts would inherit
          // the subscription) and blocking; reads answer EAGAIN when empty either way.
          (void)::fcntl(stream->fd, F_SETFD, FD_CLOEXEC);
          (void)::fcntl(stream->fd, F_SETFL, ::fcntl(stream->fd, F_GETFL) | O_NONBLOCK);
          const std::uint64_t mask = kSubscribedMask;
          if (::write(stream->fd, &mask, sizeof mask) != static_cast<ssize_t>(sizeof mask)) {
            error = errno;
            problem = fmt::format("the SMI event mask (gpu_id {}): {}", stream->gpu_id, std::strerror(errno));
            only_absent = false;
          }
        }
        ::close(kfd);
      }
    } else {
      // A device root's stand-in: a plain file or a FIFO, never a link or a device node, opened
      // without waiting for a writer.
      const std::string path = fs_.host_path(fmt::format("{}/{}", kStandInFolder, stream->gpu_id));
      stream->fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
      struct stat st {};
      if (stream->fd < 0) {
        error = errno == ELOOP ? EACCES : errno;
        only_absent = only_absent && error == ENOENT;
        problem = fmt::format("{}: {}", path, error == ENOENT ? "no KFD SMI event stream in this root" : std::strerror(errno));
      } else if (::fstat(stream->fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode))) {
        error = EACCES;
        problem = path + ": not a plain file or a FIFO";
        only_absent = false;
      }
    }
    if (error != 0) {
      if (first_error == 0) {
        first_error = error;
        first_problem = problem;
      }
      continue;
    }
    device.streams.push_back(std::move(stream));
  }
  if (device.streams.empty()) {
    device.error_code = first_error != 0 ? first_error : ENOENT;
    device.unavailable = first_error != 0 ? first_problem : "the GPU has no KFD node";
    device.try_again = first_error != 0 && only_absent;
  } else if (first_error != 0) {
    device.last_problem = first_problem;  // some nodes subscribed; say which did not
  }
}

void KfdEventWatch::drain(Device& device) {
  char buffer[4096];
  for (auto& stream : device.streams) {
    std::size_t taken = 0;
    while (taken < kMaxBytesPerDrain) {
      const ssize_t n = ::read(stream->fd, buffer, sizeof buffer);
      if (n == 0) break;  // a file's end, or a FIFO without a writer
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
          device.last_problem = fmt::format("reading the events of gpu_id {}: {}", stream->gpu_id, std::strerror(errno));
        }
        break;  // the kernel answers EAGAIN when nothing is queued
      }
      taken += static_cast<std::size_t>(n);
      split_kfd_smi_lines(
          stream->carry, stream->skipping, std::string_view(buffer, static_cast<std::size_t>(n)),
          [&](std::string_view line) {
            std::string error;
            const auto event = parse_kfd_smi_line(line, error);
            if (!event) {
              ++device.malformed;
              device.last_problem = fmt::format("gpu_id {}: \"{}\": {}", stream->gpu_id, line, error);
              return;
            }
            if (event->id < 1 || event->id > static_cast<int>(kKfdEventKinds.size())) return;  // not subscribed
            // Throttling and resets are reported on each of a GPU's nodes: counted once, from its first.
            if (event->id != kEventVmFault && !stream->device_wide) return;
            const auto kind = static_cast<std::size_t>(event->id - 1);
            ++device.counts[kind];
            device.last[kind] = event->description;
          },
          [&] {
            ++device.malformed;
            device.last_problem = fmt::format("gpu_id {}: a line longer than {} bytes", stream->gpu_id, kKfdSmiLineMax);
          });
    }
  }
}

void KfdEventWatch::read(std::size_t device_index, std::vector<Reading>& out) {
  Device& device = *devices_.at(device_index);
  const std::lock_guard lock(device.mutex);
  // Until a stream opens, each read tries again while what was missing may still appear (a driver
  // loaded later, a stand-in created later); a refusal (no permission, a kernel without SMI events,
  // a link) or a GPU without KFD nodes is final, so a sampler does not pay for it every second.
  if (device.streams.empty() && device.try_again) open_streams(device);
  ReadingList list(out);
  if (device.streams.empty()) {
    for (const std::string_view kind : kKfdEventKinds) list.failed(MetricId::kfd_events, device.error_code, device.unavailable, std::string(kind));
    return;
  }
  drain(device);
  std::string detail = fmt::format("{} since {:%Y-%m-%dT%H:%M:%S}Z", device.source,
                                   std::chrono::time_point_cast<std::chrono::seconds>(device.since));
  if (device.malformed > 0) detail += fmt::format("; {} lines skipped", device.malformed);
  if (!device.last_problem.empty()) detail += "; " + device.last_problem;
  // The latest event of the kind first: what an event about this count says (events.hpp).
  for (std::size_t i = 0; i < kKfdEventKinds.size(); ++i) {
    list.integer(MetricId::kfd_events, device.counts[i], device.last[i].empty() ? detail : fmt::format("{} ({})", device.last[i], detail),
                 std::string(kKfdEventKinds[i]));
  }
}

}  // namespace hipstack::smi::detail::amdgpu
