// A DeviceSource answered by hipstack-smid's gRPC API (hipstack.monitor.v1): `hipstack-smi --host`.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "device_source.hpp"

namespace hipstack::cli {

struct RemoteOptions {
  std::string host;     // unix:///run/hipstack/smid.sock, unix:/PATH or HOST:PORT
  std::string tls_ca;   // PEM file: verify the daemon's certificate (TCP); empty = plaintext
  std::string tls_cert; // PEM files: client certificate for mutual TLS
  std::string tls_key;
  // A host's whole command (connecting and every call) is answered within this from when the host
  // is first asked, or fails (the event stream, once connected, runs on); a refused connection
  // fails at once. Nothing is asked past `started` + kCommandTimeouts x timeout_ms: a command over
  // any number of hosts ends by then (docs/cli.md, "Many hosts").
  unsigned timeout_ms = 5000;
  // --host a,b,... or --hostfile: every host, asked together (fleet_source.hpp); empty for one host.
  std::vector<std::string> fleet;
  std::chrono::system_clock::time_point started = std::chrono::system_clock::now();

  static constexpr unsigned kCommandTimeouts = 3;
  [[nodiscard]] std::chrono::system_clock::time_point command_deadline() const {
    return started + kCommandTimeouts * std::chrono::milliseconds(timeout_ms);
  }
};

// Connects (waiting at most timeout_ms); throws smi::Error(read_failure) naming the host.
std::unique_ptr<DeviceSource> connect_remote(const RemoteOptions& options);

struct CommonOptions;
struct QueryOptions;
struct JobOptions;
struct ErrorListOptions;

// `--host ... COMMAND`, its arguments checked. Each program links one definition: hipstack-smi runs
// hipstack-smi-remote with the same arguments (on_host_exec.cpp), so that it starts without loading
// gRPC (about 10 ms); hipstack-smi-remote asks the daemon (remote_source.cpp).
int run_on_host(const RemoteOptions& remote, const std::string& command, const CommonOptions& common,
                const QueryOptions& query, const std::string& health_policy, const JobOptions& job, const ErrorListOptions& errors,
                char** argv);

}  // namespace hipstack::cli
