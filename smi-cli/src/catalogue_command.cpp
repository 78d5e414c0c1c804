// `hipstack-smi catalogue`: every metric with its facts, its groups and its names in the other tools,
// as a table, CSV, JSON or the markdown of docs/metrics.md (commands.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "commands.hpp"
#include "nvidia_smi_fields.hpp"
#include "render.hpp"

namespace hipstack::cli {
namespace {

std::string group_members(const smi::MetricGroup& group, std::string_view quote) {
  std::string out;
  for (const smi::MetricId id : group.members) {
    out += fmt::format("{}{}{}{}", out.empty() ? "" : ", ", quote, smi::find_metric(id)->name, quote);
  }
  return out;
}
// The names a tool gives metric `id` (catalogue --json).
Json foreign_names_json(smi::ForeignTool tool, smi::MetricId id) {
  Json out = Json::array();
  for (const std::string_view name : smi::foreign_names_of(tool, id)) out.push_back(std::string(name));
  return out;
}

// A tool's whole table (catalogue --json): each name with the metrics it is answered from.
Json foreign_table_json(smi::ForeignTool tool) {
  Json out = Json::array();
  for (const smi::ForeignName& n : smi::foreign_names(tool)) {
    Json from = Json::array();
    for (const smi::MetricId id : n.from) from.push_back(std::string(smi::find_metric(id)->name));
    out.push_back({{"name", std::string(n.name)}, {"from", std::move(from)}, {"instance", std::string(n.instance)},
                   {"note", std::string(n.note)}});
  }
  return out;
}

// A metric's names in the other tools, for the markdown's "Foreign names" section: "-" for none.
std::string foreign_cell(smi::ForeignTool tool, smi::MetricId id) {
  std::string out;
  if (tool == smi::ForeignTool::nvidia_smi) {
    for (const NvidiaSmiField* f : nvidia_smi_fields_of(id)) out += fmt::format("{}`{}`", out.empty() ? "" : ", ", f->name);
  } else {
    for (const std::string_view name : smi::foreign_names_of(tool, id)) out += fmt::format("{}`{}`", out.empty() ? "" : ", ", name);
  }
  return out.empty() ? "-" : out;
}

std::string foreign_names_markdown(std::span<const smi::MetricInfo> all) {
  std::string out =
      "\n## Foreign names\n\nThe names nvidia-smi, pynvml, amdsmi, rocm-smi and Node Feature Discovery (`static --nfd`'s "
      "labels) give each metric hipstack answers them from, and the figures of hipstack-smid's job summary made from it "
      "(foreign-names.md: the tables, how the figures convert, how to add one); metrics no tool names are left out.\n\n"
      "| metric | nvidia-smi | pynvml | amdsmi | rocm-smi | NFD label | job figure |\n|---|---|---|---|---|---|---|\n";
  for (const smi::MetricInfo& m : all) {
    const std::string nvidia = foreign_cell(smi::ForeignTool::nvidia_smi, m.id);
    const std::string pynvml = foreign_cell(smi::ForeignTool::pynvml, m.id);
    const std::string amdsmi = foreign_cell(smi::ForeignTool::amdsmi, m.id);
    const std::string rocm = foreign_cell(smi::ForeignTool::rocm_smi, m.id);
    const std::string nfd = foreign_cell(smi::ForeignTool::nfd, m.id);
    const std::string job = foreign_cell(smi::ForeignTool::jobs, m.id);
    if (nvidia == "-" && pynvml == "-" && amdsmi == "-" && rocm == "-" && nfd == "-" && job == "-") continue;
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} |\n", m.name, nvidia, pynvml, amdsmi, rocm, nfd, job);
  }
  return out;
}

// The catalogue's columns on how outputs use a metric: its groups, the limit it is shown against,
// its place in the daemon's default series profile, the states it takes.
void add_uses(Json& metric, smi::MetricId id) {
  Json groups = Json::array();
  for (const smi::MetricGroup& g : smi::metric_groups()) {
    if (std::find(g.members.begin(), g.members.end(), id) != g.members.end()) groups.push_back(std::string(g.name));
  }
  metric["groups"] = std::move(groups);
  const auto limit = smi::metric_limit(id);
  metric["limit"] = limit ? Json{{"metric", std::string(smi::find_metric(limit->limit)->name)},
                                 {"role", std::string(smi::limit_role_name(limit->role))}}
                          : Json(nullptr);
  metric["default_series"] = std::string(smi::default_series_name(smi::metric_default_series(id)));
  Json states = Json::array();
  for (const std::string_view state : smi::metric_states(id)) states.push_back(std::string(state));
  metric["states"] = std::move(states);
}

// `catalogue --json`: every metric with its facts and its names in the other tools, the other
// tools' tables, the groups.
Json catalogue_document() {
  const auto all = smi::catalogue();
  Json doc = document("catalogue");
  doc["metrics"] = Json::array();
  for (const smi::MetricInfo& m : all) {
    doc["metrics"].push_back({{"id", static_cast<std::uint32_t>(m.id)},
                              {"name", std::string(m.name)},
                              {"unit", std::string(smi::unit_name(m.unit))},
                              {"unit_symbol", std::string(smi::unit_symbol(m.unit))},
                              {"type", std::string(smi::value_type_name(m.type))},
                              {"scope", std::string(smi::scope_name(m.scope))},
                              {"kind", std::string(smi::kind_name(m.kind))},
                              {"cost", std::string(smi::cost_name(m.cost))},
                              {"instance", std::string(m.instance_label)},
                              {"help", std::string(m.help)}});
    add_uses(doc["metrics"].back(), m.id);
    Json foreign = Json::array();
    for (const NvidiaSmiField* f : nvidia_smi_fields_of(m.id)) foreign.push_back(std::string(f->name));
    doc["metrics"].back()["nvidia_smi"] = std::move(foreign);
    doc["metrics"].back()["pynvml"] = foreign_names_json(smi::ForeignTool::pynvml, m.id);
    doc["metrics"].back()["amdsmi"] = foreign_names_json(smi::ForeignTool::amdsmi, m.id);
    doc["metrics"].back()["rocm_smi"] = foreign_names_json(smi::ForeignTool::rocm_smi, m.id);
    doc["metrics"].back()["nfd"] = foreign_names_json(smi::ForeignTool::nfd, m.id);
    doc["metrics"].back()["job_figures"] = foreign_names_json(smi::ForeignTool::jobs, m.id);
  }
  // The other tools' names (docs/nvidia-smi-compat.md is generated from this list).
  doc["nvidia_smi_fields"] = Json::array();
  for (const NvidiaSmiField& f : nvidia_smi_gpu_fields()) {
    Json from = Json::array();
    for (const smi::MetricId id : f.from) from.push_back(std::string(smi::find_metric(id)->name));
    doc["nvidia_smi_fields"].push_back({{"name", std::string(f.name)},
                                        {"aliases", Json(nvidia_smi_aliases(f))},
                                        {"unit", std::string(f.unit)},
                                        {"from", std::move(from)},
                                        {"instance", f.form == NvidiaSmiForm::reason ? "" : std::string(f.instance)},
                                        {"reason", f.form == NvidiaSmiForm::reason ? std::string(f.instance) : ""},
                                        {"answered", f.form != NvidiaSmiForm::none},
                                        {"missing", std::string(f.missing)},
                                        {"note", std::string(f.note)}});
  }
  // The other tools' tables and the job summary's figures (docs/foreign-names.md is generated from
  // these lists).
  doc["pynvml_calls"] = foreign_table_json(smi::ForeignTool::pynvml);
  doc["amdsmi_keys"] = foreign_table_json(smi::ForeignTool::amdsmi);
  doc["rocm_smi_keys"] = foreign_table_json(smi::ForeignTool::rocm_smi);
  doc["nfd_labels"] = foreign_table_json(smi::ForeignTool::nfd);
  doc["job_figures"] = foreign_table_json(smi::ForeignTool::jobs);
  doc["groups"] = Json::array();
  for (const smi::MetricGroup& g : smi::metric_groups()) {
    Json members = Json::array();
    for (const smi::MetricId id : g.members) members.push_back(std::string(smi::find_metric(id)->name));
    doc["groups"].push_back({{"name", std::string(g.name)}, {"help", std::string(g.help)}, {"metrics", members}});
  }
  return doc;
}

// `catalogue --markdown` (docs/metrics.md).
std::string catalogue_markdown() {
  const auto all = smi::catalogue();
  std::string out =
      "# Metric catalogue\n\nGenerated by `hipstack-smi catalogue --markdown` from "
      "`smi-lib/include/hipstack/smi_catalogue.h`; do not edit by hand (a test compares them). The `cost` "
      "column is the metric's cost class (performance.md, \"Cost classes\"): how often hipstack-smid "
      "reads it. `limit` is the metric a value is shown and judged against (tables print it beside the "
      "value, health compares with it); `series` is its place in hipstack-smid's default series profile "
      "(daemon.md, \"Series profiles\"): `series`, `full_only` or `info_label`.\n\n"
      "| id | name | unit | type | scope | kind | cost | instance | limit | series | help |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const smi::MetricInfo& m : all) {
    const auto limit = smi::metric_limit(m.id);
    out += fmt::format("| {} | `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", static_cast<std::uint32_t>(m.id), m.name,
                       smi::unit_symbol(m.unit).empty() ? "-" : smi::unit_symbol(m.unit),
                       std::string(smi::value_type_name(m.type)),
                       smi::scope_name(m.scope), smi::kind_name(m.kind), smi::cost_name(m.cost),
                       m.instance_label.empty() ? "-" : m.instance_label,
                       limit ? fmt::format("{} `{}`", smi::limit_role_name(limit->role), smi::find_metric(limit->limit)->name)
                             : std::string("-"),
                       smi::default_series_name(smi::metric_default_series(m.id)), m.help);
  }
  out += "\n## States\n\nThe values a state metric takes, in its source's documented order (a newer driver may "
         "report one not listed). hipstack-smid exports each as a state set: one series per state.\n\n"
         "| metric | states |\n|---|---|\n";
  for (const smi::MetricInfo& m : all) {
    const auto states = smi::metric_states(m.id);
    if (!states.empty()) out += fmt::format("| `{}` | `{}` |\n", m.name, fmt::join(states, "`, `"));
  }
  out += "\n## Groups\n\n`-m GROUP` stands for these metrics (each command shows those of its kind).\n\n"
         "| group | metrics | help |\n|---|---|---|\n";
  for (const smi::MetricGroup& g : smi::metric_groups()) {
    out += fmt::format("| `{}` | {} | {} |\n", g.name, group_members(g, "`"), g.help);
  }
  return out + foreign_names_markdown(all);
}

}  // namespace

int run_catalogue(const CommonOptions& options, bool markdown) {
  const auto all = smi::catalogue();
  if (options.format == Format::json) {
    print_json(catalogue_document());
    return kExitOk;
  }
  if (markdown) {
    print(catalogue_markdown());
    return kExitOk;
  }
  // The cost column comes last in CSV: scripts that read the columns by position keep working.
  std::string csv = "id,name,unit,type,scope,kind,instance,help,cost\n";
  Table table({"ID", "NAME", "UNIT", "SCOPE", "KIND", "COST", "INSTANCE", "HELP"});
  for (const smi::MetricInfo& m : all) {
    csv += csv_row({std::to_string(static_cast<std::uint32_t>(m.id)), std::string(m.name),
                    std::string(smi::unit_symbol(m.unit)), std::string(smi::value_type_name(m.type)), std::string(smi::scope_name(m.scope)),
                    std::string(smi::kind_name(m.kind)), std::string(m.instance_label), std::string(m.help),
                    std::string(smi::cost_name(m.cost))});
    table.add({std::to_string(static_cast<std::uint32_t>(m.id)), std::string(m.name),
               std::string(smi::unit_symbol(m.unit)), std::string(smi::scope_name(m.scope)),
               std::string(smi::kind_name(m.kind)), std::string(smi::cost_name(m.cost)), std::string(m.instance_label),
               std::string(m.help)});
  }
  if (options.format == Format::csv) {
    print(csv);
    return kExitOk;
  }
  Table groups({"GROUP", "HELP (-m GROUP; catalogue --json lists the metrics)"});
  for (const smi::MetricGroup& g : smi::metric_groups()) groups.add({std::string(g.name), std::string(g.help)});
  print(table.str() + "\n" + groups.str());
  return kExitOk;
}

}  // namespace hipstack::cli
