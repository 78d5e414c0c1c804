// KFD SMI events (AMDKFD_IOC_SMI_EVENTS): what the amdgpu driver tells a subscriber without a GPU
// process of its own: VM faults, thermal throttling, and GPU resets starting and ending.
//
// The kernel hands a subscriber an anonymous file; each event is one line "ID PAYLOAD\n" with ID in
// hex (enum kfd_smi_event of <linux/kfd_ioctl.h>) and a payload per ID (the KFD_EVENT_FMT_* formats
// of the kernel's kfd_smi_events.c): VM fault "PID:TASK", thermal throttle "MASK:COUNTER" (hex),
// reset "SEQ CAUSE" (hex sequence; kernels before 6.3 print no cause). Under a device root (a capture,
// the emulator, a test) the stream is the file or FIFO /dev/kfd-smi-events/GPU_ID of that root, in
// the same format (docs/amdgpu-backend.md, "KFD SMI events").
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <hipstack/smi.hpp>

namespace hipstack::smi::detail {
class FsView;
}

namespace hipstack::smi::detail::amdgpu {

// The kinds hipstack subscribes to, in the order of their kernel ids (1..4); the `event` instance of
// the kfd_events metric.
inline constexpr std::array<std::string_view, 4> kKfdEventKinds = {"vm_fault", "thermal_throttle", "gpu_pre_reset",
                                                                   "gpu_post_reset"};

struct KfdSmiEvent {
  int id = 0;               // kernel event id; 1..4 are kKfdEventKinds[id - 1]
  std::string description;  // what it says, in words (text from the kernel is data: escaped at the edge)
};

// One line without its newline. nullopt and `error` set when it is not a line the kernel writes; an
// event id the kernel defines but hipstack does not subscribe to (5..13) parses with id set and an
// empty description.
std::optional<KfdSmiEvent> parse_kfd_smi_line(std::string_view line, std::string& error);

// The longest line accepted: the kernel's lines fit in KFD_SMI_EVENT_MSG_SIZE (96) bytes.
inline constexpr std::size_t kKfdSmiLineMax = 256;

// Splits a stream's bytes into lines: `carry` holds a line begun in an earlier read. A line longer
// than kKfdSmiLineMax is dropped whole (reported through `on_overlong`).
template <typename OnLine, typename OnOverlong>
void split_kfd_smi_lines(std::string& carry, bool& skipping, std::string_view bytes, OnLine on_line, OnOverlong on_overlong) {
  for (const char c : bytes) {
    if (c == '\n') {
      if (!skipping) on_line(std::string_view(carry));
      carry.clear();
      skipping = false;
    } else if (!skipping) {
      if (carry.size() >= kKfdSmiLineMax) {
        carry.clear();
        skipping = true;
        on_overlong();
      } else {
        carry.push_back(c);
      }
    }
  }
}

// One subscription per KFD node of each GPU, opened at the first read (tried again at each read
// while only absent paths stood in the way: a driver loaded later, a stand-in created later; a
// refusal is final) and kept while the backend
// lives: the counts are "since this program subscribed". Reads never wait (the kernel answers EAGAIN
// when nothing is queued) and take at most kMaxBytesPerDrain per stream per read.
class KfdEventWatch {
 public:
  // gpu_ids: each GPU's KFD nodes' gpu_id (the first is the GPU's own; a partitioned GPU has more).
  KfdEventWatch(const FsView& fs, std::vector<std::vector<std::uint64_t>> gpu_ids);
  ~KfdEventWatch();
  KfdEventWatch(const KfdEventWatch&) = delete;
  KfdEventWatch& operator=(const KfdEventWatch&) = delete;

  void read(std::size_t device, std::vector<Reading>& out);
  // True once a subscription opened the live /dev/kfd, which makes this program a KFD process.
  [[nodiscard]] bool opened_live_kfd() const;

  static constexpr std::size_t kMaxBytesPerDrain = 64 * 1024;

 private:
  struct Stream;
  struct Device;
  void open_streams(Device& device);
  void drain(Device& device);

  const FsView& fs_;
  std::vector<std::unique_ptr<Device>> devices_;
  mutable std::mutex live_mutex_;
  bool live_opened_ = false;
};

}  // namespace hipstack::smi::detail::amdgpu
