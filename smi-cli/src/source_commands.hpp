// The commands any DeviceSource answers, dispatched by name: on this machine, through the node's
// daemon, through remote daemons (daemon_source.hpp, remote_source.hpp, fleet_source.hpp).
#pragma once

#include <string>

#include "commands.hpp"

namespace hipstack::cli {

class LocalSource;

// The commands that read through any DeviceSource (the remote ones of command_table.cpp: list,
// static, metric, query, ras, health, partition and the overview, command ""), on this machine
// (`local` set: the overview also lists processes) or through a daemon. Anything else is the
// caller's to refuse before (std::logic_error).
int run_source_command(const DeviceSource& source, const LocalSource* local, const std::string& command,
                       const CommonOptions& common, const QueryOptions& query, const std::string& health_policy,
                       const std::string& where);
int run_through_daemon(const DeviceSource& source, const std::string& command, const CommonOptions& common,
                       const QueryOptions& query, const std::string& health_policy, const std::string& where);

}  // namespace hipstack::cli
