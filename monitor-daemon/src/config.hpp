// hipstack-smid configuration: a "key = value" file (docs/daemon.md), reloaded on SIGHUP.
#pragma once

#include <hipstack/smi.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "series_profile.hpp"

namespace hipstack::smid {

struct Config {
  std::string listen = "127.0.0.1:9400";        // host:port of the HTTP endpoint (/metrics, /healthz, /readyz)
  std::string grpc_listen = "unix:/run/hipstack/smid.sock";  // unix:PATH or host:port; "off": no gRPC
  std::string grpc_socket_group = "hipstack";    // group that may connect to the unix socket (mode 0660)
  std::string admin_group = "hipstack-admin";    // unix-socket peers in this group may mutate (root always may)
  std::string tls_cert;                          // server certificate (PEM) for a TCP gRPC listener
  std::string tls_key;
  std::string tls_client_ca;                     // CA that signs client certificates (mutual TLS)
  std::vector<std::string> tls_admin_subjects;   // client certificate common names with the admin role
  std::size_t history_length = 60;               // live samples kept per device
  std::size_t history_memory = 16u << 20;        // bytes all history rings may use together (history_memory_mb)
  std::size_t max_streams = 32;                  // concurrent WatchMetrics/WatchHealth streams
  std::chrono::milliseconds slow_consumer_limit{10000};  // a stream write blocked this long is dropped
  std::chrono::milliseconds stream_idle_limit{60000};    // a reflection stream silent this long is dropped
  // The flood guard of a plaintext TCP gRPC listener (tcp_listener.hpp, docs/security.md): a
  // connection past the burst and then the rate is closed, its source refused for a while.
  std::size_t grpc_flood_burst_bytes = 64 * 1024;
  std::size_t grpc_flood_bytes_per_second = 16 * 1024;  // 0: no guard
  std::chrono::seconds grpc_flood_refuse{10};
  std::string dbus = "system";                   // bus for org.hipstack.Monitor1: system, session or off
  std::chrono::milliseconds fast_interval{1000};  // live metrics (power, clocks, use, temperatures)
  std::chrono::milliseconds slow_interval{30000}; // identity, static facts and health
  // Costly metrics (the catalogue's cost class: NVML's energy counter ~3 ms a call, BAR1, PCIe
  // replays, RAS and bad pages): read this often, their last exact values exported in between
  // (energy_consumed: plus power integrated, energy_estimate.hpp). At most fast_interval: read with
  // every sample.
  std::chrono::milliseconds costly_interval{30000};
  // Activity over a window (SM, tensor, DRAM active, link rates: WINDOW-kind metrics): each look
  // ends one window and starts the next. Slower than the live metrics because a GPM look costs
  // milliseconds per NVIDIA GPU; 0 turns them off.
  std::chrono::milliseconds window_interval{10000};
  std::chrono::milliseconds read_deadline{2000};  // a device sample slower than this is stale
  std::vector<std::string> metrics;               // exported metrics (catalogue names); empty = all
  // Which of them are series on /metrics (series_profile.hpp): `default` or `full`.
  SeriesProfile metrics_profile = SeriesProfile::standard;
  std::string sysfs_root;                         // "" = live /sys
  std::string procfs_root;
  std::string host;                               // "host" label; "" = gethostname()
  // Whose work is on each GPU (attribution_watcher.hpp, docs/deploy-kubernetes.md): `auto` asks
  // the kubelet and scans processes while kubelet_socket exists, `on` always (a missing socket is
  // an error shown), `off` never.
  enum class Attribution : std::uint8_t { automatic, on, off };
  Attribution attribution = Attribution::automatic;
  std::string kubelet_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::string kubelet_log_dir = "/var/log";       // holds the kubelet's pods/ and containers/ folders
  std::chrono::milliseconds attribution_interval{10000};
  // Job accounting (job_accounting.hpp, docs/jobs.md); these apply at start. job_db: the job
  // store, or off (the packaged configuration sets /var/lib/hipstack/jobs.db).
  std::string job_db = "off";
  std::string job_mapping_dir;                    // dcgm-exporter's job-mapping folder; "" = none
  std::chrono::hours job_retention{24 * 90};      // stopped jobs are deleted after this; 0 = kept
  std::chrono::seconds job_save_interval{30};     // a running job's usage is written at most this often
  std::chrono::hours job_max_running{24 * 30};    // a job running longer is stopped by the daemon; 0 = never
  // Kept errors (error_keeper.hpp, docs/errors.md); these apply at start. error_db: the error
  // store, or off (kept in memory only; the packaged configuration sets /var/lib/hipstack/errors.db).
  std::string error_db = "off";
  std::chrono::hours error_retention{24 * 90};    // errors are deleted after this; 0 = kept
  std::size_t error_max_rows = 100000;            // and the oldest beyond this many rows
  std::chrono::seconds error_max_age{86400};      // errors younger than this are judged by health (errors.recent)
  std::string health_policy;                      // HealthPolicy file; "" = defaults
  // health_policy's thresholds, read and checked by load_config: a configuration that names a
  // missing or malformed file is refused as a whole (at start, or by a reload that keeps the old one).
  smi::HealthPolicy policy;
};

// Throws std::runtime_error naming `where` unless value is unix:/PATH, host:port or off.
void check_grpc_listen(const std::string& value, const std::string& where);

// Reads a config file and every file it names that is read at once (health_policy); throws
// std::runtime_error naming file:line for a bad line.
Config load_config(const std::string& path);

}  // namespace hipstack::smid
