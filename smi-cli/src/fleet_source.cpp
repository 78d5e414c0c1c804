// Several hipstack-smids' GPUs as one DeviceSource (fleet_source.hpp).
#include "fleet_source.hpp"

#include <fmt/format.h>

#include <cstdio>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <fstream>
#include <thread>

#include "commands.hpp"
#include "daemon_source.hpp"
#include "source_commands.hpp"

namespace hipstack::cli {
namespace {

constexpr std::size_t kHostfileBytes = 1 << 20;
constexpr std::size_t kHostfileLine = 1024;
constexpr std::size_t kMaxHosts = 4096;

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

// A host as --host takes it: unix:PATH, unix://PATH or HOST:PORT (names, IPv4, [IPv6]); no spaces
// or control characters (a name is printed and passed to gRPC as it is).
std::string host_problem(std::string_view host) {
  if (host.empty()) return "an empty host";
  for (const char c : host) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return "a space or control character in a host";
  }
  if (host.starts_with("unix:")) return host.size() > 5 ? "" : "unix: without a path";
  const auto colon = host.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == host.size()) return "no :PORT (HOST:PORT, or unix:PATH)";
  const std::string_view port = host.substr(colon + 1);
  if (!std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) || port.size() > 5 ||
      std::stoul(std::string(port)) == 0 || std::stoul(std::string(port)) > 65535) {
    return fmt::format("port \"{}\" is not 1..65535", port);
  }
  return {};
}

void add_host(std::vector<std::string>& hosts, std::string_view host, const std::string& where) {
  if (const std::string problem = host_problem(host); !problem.empty()) {
    throw smi::Error(smi::Error::Code::invalid_argument,
                     fmt::format("{}: {}: \"{}\"", where, problem, smi::printable_text(std::string(host))));
  }
  if (std::find(hosts.begin(), hosts.end(), host) != hosts.end()) return;
  if (hosts.size() == kMaxHosts) {
    throw smi::Error(smi::Error::Code::invalid_argument, fmt::format("{}: more than {} hosts", where, kMaxHosts));
  }
  hosts.emplace_back(host);
}

}  // namespace

std::vector<std::string> fleet_hosts(const std::vector<std::string>& host_options, const std::string& hostfile) {
  std::vector<std::string> hosts;
  for (const std::string& option : host_options) {
    std::size_t pos = 0;
    while (pos <= option.size()) {
      const std::size_t end = std::min(option.find(',', pos), option.size());
      add_host(hosts, trim(std::string_view(option).substr(pos, end - pos)), "--host");
      pos = end + 1;
    }
  }
  if (hostfile.empty()) return hosts;
  std::ifstream in(hostfile, std::ios::binary);
  if (!in) throw smi::Error(smi::Error::Code::invalid_argument, fmt::format("--hostfile {}: cannot be read", hostfile));
  std::string text(kHostfileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kHostfileBytes) {
    throw smi::Error(smi::Error::Code::invalid_argument, fmt::format("--hostfile {}: larger than 1 MiB", hostfile));
  }
  std::size_t line_number = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line(text.data() + pos, end - pos);
    ++line_number;
    pos = end + 1;
    const std::string where = fmt::format("--hostfile {} line {}", hostfile, line_number);
    if (line.size() > kHostfileLine) throw smi::Error(smi::Error::Code::invalid_argument, where + ": longer than 1 KiB");
    line = trim(line.substr(0, line.find('#')));
    if (!line.empty()) add_host(hosts, line, where);
  }
  if (hosts.empty()) {
    throw smi::Error(smi::Error::Code::invalid_argument, fmt::format("--hostfile {}: names no host", hostfile));
  }
  return hosts;
}

void for_each_parallel(std::size_t count, std::size_t parallel, const std::function<void(std::size_t)>& fn) {
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::exception_ptr first;  // an exception must not leave a thread (std::terminate): the caller gets it
  const auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!first) first = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  const std::size_t helpers = std::min(count, parallel) > 0 ? std::min(count, parallel) - 1 : 0;
  threads.reserve(helpers);
  for (std::size_t t = 0; t < helpers; ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  if (first) std::rethrow_exception(first);
}

FleetSource::FleetSource(const std::vector<std::string>& hosts, const Connect& connect)
    : members_(hosts.size()), problems_(hosts.size()) {
  // Each slot is written by its own thread only.
  for_each_parallel(hosts.size(), kParallelHosts, [&](std::size_t i) {
    Member& m = members_[i];
    m.host = hosts[i];
    m.position = i;
    try {
      m.source = connect(m.host);
      m.devices = m.source->devices();
    } catch (const std::exception& e) {
      m.source.reset();
      m.devices.clear();
      problems_[i] = e.what();
    }
  });
  for (std::size_t i = 0; i < members_.size(); ++i) {
    members_[i].first = static_cast<std::uint32_t>(member_of_.size());
    member_of_.insert(member_of_.end(), members_[i].devices.size(), static_cast<std::uint32_t>(i));
  }
}

std::pair<const FleetSource::Member*, std::uint32_t> FleetSource::locate(std::uint32_t device) const {
  if (device >= member_of_.size()) {
    throw smi::Error(smi::Error::Code::no_such_device, fmt::format("no GPU {} among the hosts' GPUs", device));
  }
  const Member& m = members_[member_of_[device]];
  return {&m, device - m.first};
}

void FleetSource::fail(const Member& member, const std::string& why) const {
  std::lock_guard lock(mutex_);
  problems_[member.position] = why;
}

std::string FleetSource::problem_of(const Member& member) const {
  std::lock_guard lock(mutex_);
  return problems_[member.position];
}

bool FleetSource::ask(const Member& member, const std::function<void(const DeviceSource&)>& fn) const {
  if (member.source == nullptr || !problem_of(member).empty()) return false;
  try {
    fn(*member.source);
    return true;
  } catch (const smi::Error& e) {
    if (e.code() == smi::Error::Code::invalid_argument) throw;  // the request's fault, the same for every host
    fail(member, e.what());
  } catch (const std::exception& e) {
    fail(member, e.what());
  }
  return false;
}

std::vector<smi::DeviceSummary> FleetSource::devices() const {
  std::vector<smi::DeviceSummary> out;
  out.reserve(member_of_.size());
  for (const Member& m : members_) {
    const std::string problem = problem_of(m);
    for (const smi::DeviceSummary& d : m.devices) {
      out.push_back(d);
      if (!problem.empty()) out.back().fault = problem;
    }
  }
  return out;
}

std::vector<std::uint32_t> FleetSource::resolve_all(std::string_view selector) const {
  // By the GPU's number on its host, its BDF or its UUID: from the listing, no call.
  std::vector<std::uint32_t> out;
  for (std::uint32_t handle = 0; handle < member_of_.size(); ++handle) {
    const auto [member, own] = locate(handle);
    const smi::DeviceSummary& d = member->devices[own];
    if (selector == std::to_string(d.index) || smi::selector_names(selector, d.bdf, d.uuid)) out.push_back(handle);
  }
  if (!out.empty()) return out;
  // Forms only a daemon resolves (a partition's id or BDF names its GPU): every host asked.
  std::vector<std::vector<std::uint32_t>> found(members_.size());
  for_each_parallel(members_.size(), kParallelHosts, [&](std::size_t i) {
    const Member& m = members_[i];
    if (m.source == nullptr || !problem_of(m).empty()) return;
    try {
      found[i].push_back(m.first + m.source->resolve(selector));
    } catch (const smi::Error& e) {
      if (e.code() != smi::Error::Code::no_such_device) fail(m, e.what());
    } catch (const std::exception& e) {
      fail(m, e.what());
    }
  });
  for (const auto& handles : found) out.insert(out.end(), handles.begin(), handles.end());
  if (out.empty()) {
    throw smi::Error(smi::Error::Code::no_such_device,
                     fmt::format("no host has a GPU \"{}\"", smi::printable_text(std::string(selector))));
  }
  return out;
}

std::uint32_t FleetSource::resolve(std::string_view selector) const { return resolve_all(selector).front(); }

std::vector<FleetSource::Batch> FleetSource::batches(const std::vector<std::uint32_t>& devices) const {
  std::vector<Batch> out;
  for (std::size_t position = 0; position < devices.size(); ++position) {
    const auto [member, own] = locate(devices[position]);
    auto it = std::find_if(out.begin(), out.end(), [m = member](const Batch& b) { return b.member == m; });
    if (it == out.end()) it = out.insert(out.end(), Batch{member, {}, {}});
    it->positions.push_back(position);
    it->handles.push_back(own);
  }
  return out;
}

std::vector<std::vector<smi::Reading>> FleetSource::sample_all(const std::vector<std::uint32_t>& devices,
                                                               const smi::SampleOptions& what) const {
  std::vector<std::vector<smi::Reading>> out(devices.size());
  const std::vector<Batch> asked = batches(devices);
  for_each_parallel(asked.size(), kParallelHosts, [&](std::size_t i) {
    const Batch& b = asked[i];
    std::vector<std::vector<smi::Reading>> answer;
    if (!ask(*b.member, [&](const DeviceSource& s) { answer = s.sample_all(b.handles, what); })) return;
    for (std::size_t k = 0; k < b.positions.size() && k < answer.size(); ++k) out[b.positions[k]] = std::move(answer[k]);
  });
  return out;
}

std::vector<smi::Reading> FleetSource::sample(std::uint32_t device, const smi::SampleOptions& what) const {
  return std::move(sample_all({device}, what).front());
}

std::vector<smi::HealthReport> FleetSource::health_all(const std::vector<std::uint32_t>& devices,
                                                       const std::string& policy_file) const {
  std::vector<smi::HealthReport> out(devices.size());
  for (std::size_t i = 0; i < devices.size(); ++i) out[i].device = devices[i];  // UNKNOWN until answered
  const std::vector<Batch> asked = batches(devices);
  for_each_parallel(asked.size(), kParallelHosts, [&](std::size_t i) {
    const Batch& b = asked[i];
    std::vector<smi::HealthReport> answer;
    if (!ask(*b.member, [&](const DeviceSource& s) { answer = s.health_all(b.handles, policy_file); })) return;
    for (std::size_t k = 0; k < b.positions.size() && k < answer.size(); ++k) {
      out[b.positions[k]] = std::move(answer[k]);
      out[b.positions[k]].device = devices[b.positions[k]];
    }
  });
  return out;
}

smi::HealthReport FleetSource::health(std::uint32_t device, const std::string& policy_file) const {
  return std::move(health_all({device}, policy_file).front());
}

std::vector<smi::Partition> FleetSource::partitions(std::uint32_t device) const {
  const auto [member, own] = locate(device);
  std::vector<smi::Partition> out;
  ask(*member, [&, own = own](const DeviceSource& s) { out = s.partitions(own); });
  return out;
}

std::vector<std::vector<smi::Partition>> FleetSource::partitions_all(const std::vector<std::uint32_t>& devices) const {
  std::vector<std::vector<smi::Partition>> out(devices.size());
  const std::vector<Batch> asked = batches(devices);
  for_each_parallel(asked.size(), kParallelHosts, [&](std::size_t i) {
    const Batch& b = asked[i];
    std::vector<std::vector<smi::Partition>> answer;
    if (!ask(*b.member, [&](const DeviceSource& s) { answer = s.partitions_all(b.handles); })) return;
    for (std::size_t k = 0; k < b.positions.size() && k < answer.size(); ++k) out[b.positions[k]] = std::move(answer[k]);
  });
  return out;
}

std::optional<double> FleetSource::sample_age_s(std::uint32_t device) const {
  const auto [member, own] = locate(device);
  return member->source == nullptr ? std::nullopt : member->source->sample_age_s(own);
}

std::string FleetSource::host_of(std::uint32_t device) const { return locate(device).first->host; }

std::vector<FleetSource::HostState> FleetSource::hosts() const {
  std::vector<HostState> out;
  for (const Member& m : members_) out.push_back({m.host, m.devices.size(), problem_of(m)});
  return out;
}

bool FleetSource::any_host_problem() const {
  return std::any_of(members_.begin(), members_.end(), [this](const Member& m) { return !problem_of(m).empty(); });
}

int run_through_fleet(const FleetSource& fleet, const std::string& command, const CommonOptions& common,
                      const QueryOptions& query, const std::string& health_policy) {
  const int code =
      run_through_daemon(fleet, command, common, query, health_policy, fmt::format("{} hosts", fleet.hosts().size()));
  std::string lines;
  for (const FleetSource::HostState& h : fleet.hosts()) {
    if (!h.problem.empty()) lines += fmt::format("host {}: NO ANSWER: {}\n", h.host, smi::printable_text(h.problem));
  }
  if (lines.empty()) return code;
  std::fputs(lines.c_str(), common.format == Format::table ? stdout : stderr);
  return code == kExitBadArguments ? code : kExitHostUnreachable;
}

}  // namespace hipstack::cli
