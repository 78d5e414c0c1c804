// hipstack-smi ras's error records (docs/errors.md): NVIDIA's XID catalogue (--xid-catalogue), AMD
// GPUs' CPER records from the driver's ring (--cper, --follow, --since, --severity) or from saved
// files (--cper-file).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"

namespace hipstack::cli {

class LocalSource;

struct CperOptions {
  bool ring = false;                    // --cper: the selected GPUs' rings
  std::vector<std::string> files;       // --cper-file: saved records
  std::vector<std::string> severities;  // --severity: recoverable, fatal, corrected, informational (any when empty)
  std::string since;                    // --since: as job list's (30m, 12h, 7d, a UTC date or time, @UNIX_SECONDS)
  bool follow = false;                  // --follow: print new records as they arrive
  double interval_s = 1.0;              // -w with --follow
  long looks = 0;                       // -i with --follow (0: until interrupted)
  bool paced = false;                   // -w or -i given
  bool xid_catalogue = false;           // --xid-catalogue
  [[nodiscard]] bool any() const { return ring || !files.empty() || xid_catalogue; }
};

int run_xid_catalogue(const CommonOptions& options);
int run_cper_files(const CperOptions& cper, const CommonOptions& options);
int run_cper_rings(const LocalSource& system, const CperOptions& cper, const CommonOptions& options);

}  // namespace hipstack::cli
