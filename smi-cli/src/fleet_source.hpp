// Several hipstack-smid's GPUs as one DeviceSource: `hipstack-smi --host a,b,c` and `--hostfile`.
// Every host is asked at once (up to kParallelHosts at a time), within the host's whole-command
// deadline and the command's (remote_source.hpp); a host that does not answer, or stops answering
// mid-command, is named, never waited for twice, and never ends the command for the others
// (docs/cli.md, "Many hosts").
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device_source.hpp"

namespace hipstack::cli {

// The hosts of `--host a,b,c` (comma-separated, repeatable) and `--hostfile FILE` (one per line, `#`
// comments, blank lines ignored), in order, each once. Throws smi::Error(invalid_argument) naming
// the file and line of a bad entry; a file is bounded (1 MiB, 4096 hosts, 1 KiB per line).
std::vector<std::string> fleet_hosts(const std::vector<std::string>& host_options, const std::string& hostfile);

// Runs fn(i) for i in [0, count) on up to `parallel` threads at once; returns when all have, then
// rethrows the first exception an fn(i) threw, if any.
void for_each_parallel(std::size_t count, std::size_t parallel, const std::function<void(std::size_t)>& fn);

class FleetSource final : public DeviceSource {
 public:
  // Connects to one host (its deadline starts then); throws smi::Error when it cannot.
  using Connect = std::function<std::unique_ptr<DeviceSource>(const std::string& host)>;
  static constexpr std::size_t kParallelHosts = 256;  // hosts asked at once

  FleetSource(const std::vector<std::string>& hosts, const Connect& connect);

  // The answering hosts' GPUs, host after host in the order given; a host that failed mid-command
  // keeps its GPUs listed with its problem as their fault.
  [[nodiscard]] std::vector<smi::DeviceSummary> devices() const override;
  [[nodiscard]] std::uint32_t resolve(std::string_view selector) const override;
  [[nodiscard]] std::vector<std::uint32_t> resolve_all(std::string_view selector) const override;
  [[nodiscard]] std::vector<smi::Reading> sample(std::uint32_t device, const smi::SampleOptions& what) const override;
  [[nodiscard]] std::vector<std::vector<smi::Reading>> sample_all(const std::vector<std::uint32_t>& devices,
                                                                  const smi::SampleOptions& what) const override;
  [[nodiscard]] std::vector<smi::Partition> partitions(std::uint32_t device) const override;
  [[nodiscard]] std::vector<std::vector<smi::Partition>> partitions_all(const std::vector<std::uint32_t>& devices) const override;
  [[nodiscard]] smi::HealthReport health(std::uint32_t device, const std::string& policy_file) const override;
  [[nodiscard]] std::vector<smi::HealthReport> health_all(const std::vector<std::uint32_t>& devices,
                                                          const std::string& policy_file) const override;
  [[nodiscard]] bool reads_devices() const override { return false; }
  [[nodiscard]] std::optional<double> sample_age_s(std::uint32_t device) const override;
  [[nodiscard]] bool spans_hosts() const override { return true; }
  [[nodiscard]] std::string host_of(std::uint32_t device) const override;

  struct HostState {
    std::string host;
    std::size_t gpus = 0;
    std::string problem;  // why it did not answer, or stopped answering; "" when it answered
  };
  [[nodiscard]] std::vector<HostState> hosts() const;
  [[nodiscard]] bool any_host_problem() const;

 private:
  struct Member {
    std::string host;
    std::unique_ptr<DeviceSource> source;  // null when it did not answer
    std::vector<smi::DeviceSummary> devices;
    std::uint32_t first = 0;    // its first device's handle here
    std::size_t position = 0;   // in members_ and problems_
  };
  // The member holding a handle and the handle on that member.
  [[nodiscard]] std::pair<const Member*, std::uint32_t> locate(std::uint32_t device) const;
  // Calls fn on a member's source unless it has failed already; a smi::Error other than a selector
  // the host does not know marks it failed (false), as does any other exception.
  bool ask(const Member& member, const std::function<void(const DeviceSource&)>& fn) const;
  void fail(const Member& member, const std::string& why) const;
  [[nodiscard]] std::string problem_of(const Member& member) const;
  // Groups handles by member: for each member asked, the positions in `devices` and its own handles.
  struct Batch {
    const Member* member;
    std::vector<std::size_t> positions;
    std::vector<std::uint32_t> handles;
  };
  [[nodiscard]] std::vector<Batch> batches(const std::vector<std::uint32_t>& devices) const;

  std::vector<Member> members_;
  std::vector<std::uint32_t> member_of_;  // handle -> position in members_
  mutable std::mutex mutex_;
  mutable std::vector<std::string> problems_;  // per member; guarded by mutex_
};

struct CommonOptions;
struct QueryOptions;

// A command over a fleet (as run_through_daemon over one daemon), then a line per host that did not
// answer: on stdout after a table, on stderr beside JSON (whose "hosts" names them too) and CSV.
// Exit kExitHostUnreachable when there is one (bad arguments stay 2).
int run_through_fleet(const FleetSource& fleet, const std::string& command, const CommonOptions& common,
                      const QueryOptions& query, const std::string& health_policy);

}  // namespace hipstack::cli
