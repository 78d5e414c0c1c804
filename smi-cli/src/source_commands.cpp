// The commands any DeviceSource answers, dispatched by name (source_commands.hpp).
#include "source_commands.hpp"

#include <stdexcept>

namespace hipstack::cli {

int run_source_command(const DeviceSource& source, const LocalSource* local, const std::string& command,
                       const CommonOptions& common, const QueryOptions& query, const std::string& health_policy,
                       const std::string& where) {
  if (command.empty()) return run_overview(source, local, common, where);
  if (command == "list") return run_list(source, common);
  if (command == "static") return run_static(source, common);
  if (command == "metric") return run_metric(source, common);
  if (command == "query") return run_query(source, common, query);
  if (command == "ras") return run_ras(source, common);
  if (command == "health") return run_health(source, common, health_policy);
  if (command == "partition") return run_partition(source, common);
  throw std::logic_error("run_source_command: \"" + command + "\" is not a command a DeviceSource answers");
}

int run_through_daemon(const DeviceSource& source, const std::string& command, const CommonOptions& common,
                       const QueryOptions& query, const std::string& health_policy, const std::string& where) {
  return run_source_command(source, nullptr, command, common, query, health_policy, where);
}

}  // namespace hipstack::cli
