// `hipstack-smi --nvidia-smi ...`: nvidia-smi's command line for the scripts written for NVIDIA
// nodes, answered for every GPU (docs/nvidia-smi-compat.md): --query-gpu, --query-compute-apps,
// -L, -q [-d ...], --help-query-gpu, --help-query-compute-apps, with -i, -f, -l / -lms and --format; dmon.
#pragma once

#include <hipstack/smi.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "device_source.hpp"
#include "nvidia_smi_dmon.hpp"
#include "nvidia_smi_q.hpp"

namespace hipstack::smi {
struct NvidiaSmiField;  // hipstack/foreign_names.hpp
}  // namespace hipstack::smi

namespace hipstack::cli {

struct NvidiaSmiRequest {
  enum class Mode { query_gpu, query_apps, list, help_gpu, help_apps, dmon, report };
  Mode mode = Mode::query_gpu;
  std::vector<const smi::NvidiaSmiField*> fields;  // --query-gpu / --query-compute-apps, in order
  bool header = true;                         // --format=csv without noheader
  bool units = true;                          // --format=csv without nounits
  std::vector<std::string> ids;               // -i / --id
  std::string file;                           // -f / --filename: written instead of stdout
  std::optional<std::chrono::milliseconds> loop;  // -l SEC / -lms MS / dmon -d SEC: repeat until SIGINT or SIGTERM
  std::optional<long> count;                  // dmon -c: this many rounds
  DmonRequest dmon;                           // dmon -s, -o
  NvidiaSmiReport report;                     // -q -d
  smi::OpenOptions open;                      // --sysfs-root, --procfs-root
  bool direct = false;                        // --direct: read the GPUs even when hipstack-smid runs
};

// What a command line nvidia-smi itself refuses gets: its words on stdout and its exit code.
struct NvidiaSmiRefusal {
  std::string message;  // nvidia-smi's, with its line ends
  int exit_code;
  std::string hint;     // hipstack's advice for stderr ("did you mean ..."), may be empty
};

// argv[compat_flag] is "--nvidia-smi" (-1: none, the program was started as nvidia-smi). A refusal
// when the arguments are not a request we answer.
std::optional<NvidiaSmiRefusal> parse_nvidia_smi_args(int argc, char** argv, int compat_flag, NvidiaSmiRequest& request);
int refuse_nvidia_smi(const NvidiaSmiRefusal& refusal);
// The modes that need no GPU (the help texts).
bool nvidia_smi_needs_gpus(const NvidiaSmiRequest& request);
int run_nvidia_smi_help(const NvidiaSmiRequest& request);
// Whether the request needs this process's own read (a process list, a PCIe measurement): the
// node's hipstack-smid answers the rest.
bool nvidia_smi_reads_processes(const NvidiaSmiRequest& request);
// `local` is the GPUs read by this process, null when `source` is the node's daemon (then the
// request must not read processes).
int run_nvidia_smi_request(const DeviceSource& source, const LocalSource* local, const NvidiaSmiRequest& request);

}  // namespace hipstack::cli
