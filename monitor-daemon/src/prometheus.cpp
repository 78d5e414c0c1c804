// Prometheus text exposition (format 0.0.4) generated from the metric catalogue and the snapshots
// (prometheus.hpp).
#include "prometheus.hpp"

#include <hipstack/gpu_errors.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <algorithm>
#include <map>
#include <optional>

namespace hipstack::smid {
namespace {

using smi::Kind;
using smi::Unit;

// Converted so that a catalogue value that prints exactly prints exactly in base units: 57 % is
// 57 / 100 = 0.57, where 57 * 0.01 would be 0.5700000000000001 (0.01 has no exact double).
double to_base(double value, const smi::UnitBase& unit) {
  return unit.scale >= 1 ? value * unit.scale : value / std::round(1 / unit.scale);
}

// hipstack_gpu_health values: -1 unknown, 0 pass, 1 warn, 2 fail.
int health_value(smi::Verdict verdict) {
  return verdict == smi::Verdict::unknown ? -1 : static_cast<int>(verdict);
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);  // shortest round-trip form, independent of the C locale
}

struct Sample {
  std::string labels;  // rendered "{...}"
  double value;
};

std::string device_labels(const smi::DeviceSummary& d, const std::string& host) {
  return fmt::format("gpu=\"{}\",uuid=\"{}\",bdf=\"{}\",model=\"{}\",vendor=\"{}\",host=\"{}\"", d.index,
                     escape_label_value(d.uuid), escape_label_value(d.bdf), escape_label_value(d.name),
                     escape_label_value(d.vendor), escape_label_value(host));
}

void family(std::string& out, const std::string& name, const char* type, std::string_view help,
            const std::vector<Sample>& samples) {
  if (samples.empty()) return;
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, escape_help(help), name, type);
  for (const Sample& s : samples) out += fmt::format("{}{} {}\n", name, s.labels, format_value(s.value));
}

}  // namespace

// Prometheus reads a page as UTF-8 (a label value that is not fails the whole scrape) and people
// read it on terminals: text that did not come through an edge that made it printable (the
// library's, a peer's) is made printable here, so no page carries raw bytes.
std::string escape_label_value(std::string_view value) {
  if (smi::holds_raw_bytes(value)) return escape_label_value(smi::printable_text(value));
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string escape_help(std::string_view text) {
  if (smi::holds_raw_bytes(text)) return escape_help(smi::printable_text(text));
  std::string out;
  for (const char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string family_name(const smi::MetricInfo& info) {
  std::string name = "hipstack_gpu_" + std::string(info.name);
  if (info.type == smi::ValueType::text) return smi::metric_states(info.id).empty() ? name + "_info" : name;
  name += smi::unit_base(info.unit).suffix;
  if (info.kind == Kind::counter) name += "_total";
  return name;
}

// A reading as a label value of an info series: text as is, numbers exactly.
std::optional<std::string> label_text(const smi::Reading& r) {
  if (const auto text = r.text()) return std::string(*text);
  if (const auto number = r.number()) return format_value(*number);
  return std::nullopt;
}

// `,name="value"` for each reading that is an info label (series_profile.hpp), in catalogue order;
// the device labels every series has already are not repeated.
std::string info_labels(const std::vector<const std::vector<smi::Reading>*>& lists) {
  std::map<smi::MetricId, std::string> labels;
  for (const auto* readings : lists) {
    for (const smi::Reading& r : *readings) {
      const smi::MetricInfo* info = smi::find_metric(r.id);
      if (!r.ok() || info == nullptr || !info_label(*info)) continue;
      if (info->id == smi::MetricId::vendor || info->id == smi::MetricId::bdf || info->id == smi::MetricId::uuid) continue;
      if (const auto text = label_text(r)) labels[r.id] = fmt::format(",{}=\"{}\"", info->name, escape_label_value(*text));
    }
  }
  std::string out;
  for (const auto& [id, label] : labels) out += label;
  return out;
}

namespace {

// The series of one device's readings under the profile: a family per metric, a state set per
// state metric.
class DeviceSeries {
 public:
  DeviceSeries(std::map<smi::MetricId, std::vector<Sample>>& buckets, SeriesProfile profile)
      : buckets_(buckets), profile_(profile) {}

  void add(const smi::Reading& r, const std::string& base_labels) {
    const smi::MetricInfo* info = smi::find_metric(r.id);
    if (!r.ok() || info == nullptr) return;
    const Exposure how = exposure(*info, profile_);
    if (how == Exposure::omitted) return;
    std::string labels = base_labels;
    if (!info->instance_label.empty()) labels += fmt::format(",{}=\"{}\"", info->instance_label, escape_label_value(r.instance));
    // An XID's action (docs/errors.md): a function of the `xid` label, so it adds no series.
    if (r.id == smi::MetricId::xid_errors) {
      labels += fmt::format(",action=\"{}\"", smi::error_action_name(smi::xid_instance_action(r.instance)));
    }
    if (how == Exposure::state_set) {
      const auto text = r.text();
      if (!text) return;
      bool known = false;
      for (const std::string_view state : smi::metric_states(r.id)) {
        known = known || state == *text;
        buckets_[r.id].push_back({fmt::format("{{{},{}=\"{}\"}}", labels, info->name, state), state == *text ? 1.0 : 0.0});
      }
      // A state the source did not document (a newer driver): shown, not dropped.
      if (!known) buckets_[r.id].push_back({fmt::format("{{{},{}=\"{}\"}}", labels, info->name, escape_label_value(*text)), 1.0});
    } else if (info->type == smi::ValueType::text) {
      if (const auto text = r.text()) buckets_[r.id].push_back({fmt::format("{{{},value=\"{}\"}}", labels, escape_label_value(*text)), 1.0});
    } else if (const auto number = r.number()) {
      buckets_[r.id].push_back({"{" + labels + "}", to_base(*number, smi::unit_base(info->unit))});
    }
  }

 private:
  std::map<smi::MetricId, std::vector<Sample>>& buckets_;
  SeriesProfile profile_;
};

}  // namespace

std::string render_samples(const std::vector<Sampler::View>& views, const ExpositionContext& context) {
  const auto catalogue = smi::catalogue();
  // Bucket every reading by catalogue position once; then write one family after another.
  std::map<smi::MetricId, std::vector<Sample>> buckets;
  std::vector<Sample> health, info, partition_info, cper;
  for (const Sampler::View& view : views) {
    if (!view.snapshot) continue;
    const DeviceSnapshot& snap = *view.snapshot;
    const std::string labels = device_labels(snap.device, context.host);
    if (view.stale) continue;  // a stuck device's old values are not presented as current
    // Only for a GPU identified now (its uuid read): one that fell off the bus loses its info
    // series, which is what the HipstackGpuMissing alert looks for.
    const bool identified = std::any_of(snap.facts().begin(), snap.facts().end(),
                                        [](const smi::Reading& r) { return r.id == smi::MetricId::uuid && r.ok(); });
    if (identified) info.push_back({"{" + labels + info_labels({&snap.facts(), &snap.live}) + "}", 1.0});
    DeviceSeries series(buckets, context.profile);
    for (const auto* readings : {&snap.facts(), &snap.live}) {
      for (const smi::Reading& r : *readings) series.add(r, labels);
    }
    // Partition-scope readings (CUs, XCCs, memory of each compute partition or MIG instance).
    for (const smi::Partition& partition : snap.partitions()) {
      const std::string partition_labels = fmt::format("{},partition=\"{}\"", labels, partition.index);
      partition_info.push_back({"{" + partition_labels + info_labels({&partition.readings}) + "}", 1.0});
      DeviceSeries partition_series(buckets, context.profile);
      for (const smi::Reading& r : partition.readings) partition_series.add(r, partition_labels);
    }
    // One series per check: a check with several findings (one per sensor) reports its worst.
    // UNKNOWN (could not be evaluated) is -1: exported, so alerts can see it, and below every
    // evaluated verdict, so "> 0" and "== 2" queries keep their meaning.
    std::map<std::string, int> worst;
    for (const smi::HealthFinding& f : snap.health().findings) {
      int& v = worst.try_emplace(f.check, -1).first->second;
      v = std::max(v, health_value(f.verdict));
    }
    for (const auto& [check, verdict] : worst) {
      health.push_back({fmt::format("{{{},check=\"{}\"}}", labels, escape_label_value(check)), static_cast<double>(verdict)});
    }
    health.push_back({fmt::format("{{{},check=\"overall\"}}", labels), static_cast<double>(health_value(snap.health().overall))});
    for (const CperCount& c : snap.slow->cper_records) {
      cper.push_back({fmt::format("{{{},severity=\"{}\",action=\"{}\"}}", labels, escape_label_value(c.severity), escape_label_value(c.action)),
                      static_cast<double>(c.records)});
    }
  }
  std::string out;
  out.reserve(64 * 1024);
  family(out, "hipstack_gpu_info", "gauge",
         "GPU identity and static facts as labels (1 per GPU): driver, firmware and board names, partition modes, "
         "limits; series of the other families join on uuid.", info);
  family(out, "hipstack_gpu_partition_info", "gauge",
         "Compute partition or MIG instance facts as labels (1 per partition): its ids, compute units, XCCs, memory.",
         partition_info);
  for (const smi::MetricInfo& metric : catalogue) {
    const auto bucket = buckets.find(metric.id);
    if (bucket == buckets.end()) continue;
    const bool states = !smi::metric_states(metric.id).empty();
    const std::string help = states ? fmt::format("{} State set: 1 for the current state, 0 for the others.", metric.help)
                                    : std::string(metric.help);
    family(out, family_name(metric), metric.kind == Kind::counter ? "counter" : "gauge", help, bucket->second);
  }
  family(out, "hipstack_gpu_health", "gauge",
         "Health check verdict: -1 unknown (could not be evaluated), 0 pass, 1 warn, 2 fail (check=\"overall\" is the GPU's verdict).",
         health);
  family(out, "hipstack_gpu_cper_records_total", "counter",
         "CPER records of the GPU's driver ring this daemon recorded since it started (records an earlier run stored are not "
         "counted again), by severity and the action they call for (docs/errors.md).",
         cper);
  family(out, "hipstack_smid_build_info", "gauge", "hipstack-smid build information.",
         {{fmt::format("{{version=\"{}\",host=\"{}\"}}", escape_label_value(context.version), escape_label_value(context.host)), 1.0}});
  return out;
}

void render_status(std::string& out, const std::vector<Sampler::View>& views, const ExpositionContext& context) {
  std::vector<Sample> up, age;
  const auto now = std::chrono::steady_clock::now();
  for (const Sampler::View& view : views) {
    if (!view.snapshot) continue;
    const std::string labels = "{" + device_labels(view.snapshot->device, context.host) + "}";
    up.push_back({labels, Sampler::up(view) ? 1.0 : 0.0});
    // The sample's age is the exporter's own detail (up says whether it is current): full only.
    if (view.snapshot->have_live && context.profile == SeriesProfile::full) age.push_back({labels, std::chrono::duration<double>(now - view.snapshot->live_at).count()});
  }
  family(out, "hipstack_gpu_up", "gauge",
         "1 when the GPU's latest sample finished within the read deadline and the GPU answered it; 0 when it is stuck, lost or unreadable.", up);
  family(out, "hipstack_gpu_sample_age_seconds", "gauge", "Age of the GPU's latest live sample.", age);
}

std::string container_family_name(const smi::MetricInfo& info) {
  std::string_view name = info.name;
  if (name.starts_with("process_")) name.remove_prefix(8);
  return fmt::format("hipstack_container_gpu_{}{}", name, smi::unit_base(info.unit).suffix);
}

// Whose work is on each GPU (attribution.hpp): one series per holding the kubelet reports, the
// container's summed process use per GPU, and whether the kubelet answered.
void render_attribution(std::string& out, const std::vector<Sampler::View>& views, const ExpositionContext& context) {
  if (!context.attribution && !context.jobs) return;
  std::map<std::uint32_t, std::string> labels_of;
  std::vector<Sample> holders, processes;
  for (const Sampler::View& view : views) {
    if (!view.snapshot) continue;
    const std::string& labels = labels_of.emplace(view.snapshot->device.index, device_labels(view.snapshot->device, context.host)).first->second;
    // A batch job running on the GPU (job accounting or the job-mapping folder): hpc_job, as dcgm-exporter names it.
    if (!context.jobs) continue;
    const auto jobs = context.jobs->find(gpu_key(view.snapshot->device));
    if (jobs == context.jobs->end()) continue;
    for (const std::string& job : jobs->second) holders.push_back({fmt::format("{{{},hpc_job=\"{}\"}}", labels, escape_label_value(job)), 1.0});
  }
  static const Attribution kNone;
  const Attribution& a = context.attribution ? *context.attribution : kNone;
  std::map<smi::MetricId, std::vector<Sample>> use;
  for (const GpuHolder& h : a.holders) {
    const auto device = labels_of.find(h.target.gpu);
    if (device == labels_of.end()) continue;
    std::string labels = device->second;
    if (h.target.partition) labels += fmt::format(",partition=\"{}\"", *h.target.partition);
    labels += fmt::format(",pod=\"{}\",namespace=\"{}\",container=\"{}\",resource=\"{}\"", escape_label_value(h.pod),
                          escape_label_value(h.namespace_name), escape_label_value(h.container), escape_label_value(h.resource));
    if (!h.claim.empty()) labels += fmt::format(",claim=\"{}\"", escape_label_value(h.claim));
    holders.push_back({"{" + labels + "}", 1.0});
  }
  for (const ContainerUse& c : a.containers) {
    const auto device = labels_of.find(c.gpu);
    if (device == labels_of.end()) continue;
    // Named as the kubelet names it; by its ids where the kubelet's log folders do not say.
    const std::string who = c.name ? fmt::format("{},pod=\"{}\",namespace=\"{}\",container=\"{}\"", device->second,
                                                 escape_label_value(c.name->pod), escape_label_value(c.name->namespace_name),
                                                 escape_label_value(c.name->container))
                                   : fmt::format("{},pod_uid=\"{}\",container_id=\"{}\"", device->second,
                                                 escape_label_value(c.ref.pod_uid), escape_label_value(c.ref.container_id));
    processes.push_back({"{" + who + "}", static_cast<double>(c.pids.size())});
    for (const smi::Reading& r : c.readings) {
      const smi::MetricInfo* info = smi::find_metric(r.id);
      const auto number = r.number();
      if (info == nullptr || !number) continue;
      std::string labels = who;
      if (!info->instance_label.empty()) labels += fmt::format(",{}=\"{}\"", info->instance_label, escape_label_value(r.instance));
      use[r.id].push_back({"{" + labels + "}", to_base(*number, smi::unit_base(info->unit))});
    }
  }
  family(out, "hipstack_gpu_attribution_info", "gauge",
         "A container the kubelet says holds this GPU or partition (1 per holding): pod, namespace, container, the device "
         "plugin resource or DRA driver, and the DRA claim; or a batch job running on it (hpc_job).",
         holders);
  family(out, "hipstack_container_gpu_processes", "gauge", "Processes of the container with work on this GPU.", processes);
  for (const auto& [id, samples] : use) {
    const smi::MetricInfo* info = smi::find_metric(id);
    family(out, container_family_name(*info), "gauge", fmt::format("{} Summed over the container's processes.", info->help), samples);
  }
  if (!a.kubelet) return;
  family(out, "hipstack_smid_kubelet_up", "gauge", "1 when the kubelet's pod-resources API answered the last look, else 0.",
         {{"", a.kubelet_ok ? 1.0 : 0.0}});
  family(out, "hipstack_smid_attribution_dropped_devices", "gauge",
         "Container devices the kubelet listed past the daemon's caps (4096 containers, 64 devices each): not attributed.",
         {{"", static_cast<double>(a.kubelet_dropped)}});
  family(out, "hipstack_smid_attribution_unmatched_devices", "gauge",
         "GPU devices the kubelet says a container holds that match no GPU or partition here (the daemon's log and gRPC "
         "GetAttribution name them).",
         {{"", static_cast<double>(a.unmatched.size())}});
}

// The daemon's own costs: the standard process collector's names, the sample durations per backend.
void render_self(std::string& out, const ExpositionContext& context) {
  if (const auto& p = context.process) {
    const auto one = [&out](const char* name, const char* type, const char* help, auto value) {
      if (value) family(out, name, type, help, {{"", static_cast<double>(*value)}});
    };
    one("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", p->cpu_seconds);
    one("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", p->resident_bytes);
    one("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", p->virtual_bytes);
    one("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", p->start_time_seconds);
    one("process_open_fds", "gauge", "Number of open file descriptors.", p->open_fds);
    one("process_max_fds", "gauge", "Maximum number of open file descriptors.", p->max_fds);
    one("hipstack_smid_threads", "gauge", "Threads of hipstack-smid (samplers, stuck reads' stand-ins, gRPC, HTTP, D-Bus, jobs, errors).",
        p->threads);
  }
  if (const auto& m = context.memory) {
    const auto bytes = [](std::uint64_t n) { return static_cast<double>(n); };
    family(out, "hipstack_smid_history_bytes", "gauge", "Bytes the GPUs' history rings (GetHistory's samples) hold now.",
           {{"", bytes(m->history_bytes)}});
    family(out, "hipstack_smid_history_limit_bytes", "gauge", "The bound on the history rings' bytes (history_memory_mb).",
           {{"", bytes(m->history_limit_bytes)}});
    if (m->heap_in_use_bytes && m->heap_free_bytes) {
      family(out, "hipstack_smid_heap_bytes", "gauge",
             "malloc's heap: the blocks in use (the history rings and SQLite's memory among them) and the free space it holds.",
             {{"{state=\"in_use\"}", bytes(*m->heap_in_use_bytes)}, {"{state=\"free\"}", bytes(*m->heap_free_bytes)}});
    }
    family(out, "hipstack_smid_sqlite_bytes", "gauge", "Memory SQLite holds: the job and error stores' page caches and statements.",
           {{"", bytes(m->sqlite_bytes)}});
  }
  if (context.sample_durations.empty()) return;
  constexpr const char* kName = "hipstack_smid_sample_duration_seconds";
  out += fmt::format("# HELP {} Time one sample of one GPU took (its live reads, and its facts and health when due), by backend.\n"
                     "# TYPE {} histogram\n", kName, kName);
  for (const auto& [backend, counts] : context.sample_durations) {
    const std::string label = escape_label_value(backend);
    for (std::size_t i = 0; i < DurationHistogram::kBounds.size(); ++i) {
      out += fmt::format("{}_bucket{{backend=\"{}\",le=\"{}\"}} {}\n", kName, label, format_value(DurationHistogram::kBounds[i]),
                         counts.cumulative[i]);
    }
    out += fmt::format("{}_bucket{{backend=\"{}\",le=\"+Inf\"}} {}\n{}_sum{{backend=\"{}\"}} {}\n{}_count{{backend=\"{}\"}} {}\n", kName,
                       label, counts.count, kName, label, format_value(counts.sum), kName, label, counts.count);
  }
}

void render_duration(std::string& out, std::chrono::steady_clock::time_point start) {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  family(out, "hipstack_smid_scrape_duration_seconds", "gauge", "Time taken to render this page.", {{"", seconds}});
}

std::string render_metrics(const std::vector<Sampler::View>& views, const ExpositionContext& context) {
  const auto start = std::chrono::steady_clock::now();
  std::string out = render_samples(views, context);
  render_attribution(out, views, context);
  render_status(out, views, context);
  render_self(out, context);
  render_duration(out, start);
  return out;
}

std::string MetricsPage::render(const std::vector<Sampler::View>& views, const ExpositionContext& context) {
  const Parts parts = render_parts(views, context);
  return *parts.samples + *parts.attribution + parts.status;
}

MetricsPage::Parts MetricsPage::render_parts(const std::vector<Sampler::View>& views, const ExpositionContext& context) {
  const auto start = std::chrono::steady_clock::now();
  Key key;
  key.host = context.host;
  key.version = context.version;
  key.profile = context.profile;
  for (const Sampler::View& view : views) key.devices.push_back({view.snapshot, view.stale});
  std::shared_ptr<const std::string> samples;
  {
    std::lock_guard lock(mutex_);
    if (samples_ && key == key_) samples = samples_;
  }
  if (!samples) {
    // Rendered outside the lock: concurrent first scrapes of a new sample may each render it.
    samples = std::make_shared<const std::string>(render_samples(views, context));
    std::lock_guard lock(mutex_);
    key_ = key;
    samples_ = samples;
  }
  // Whose work is on each GPU: as large as the kubelet's answer, so rendered once per look too.
  AttributionKey attribution_key{std::move(key), context.attribution, context.jobs};
  std::shared_ptr<const std::string> attribution;
  {
    std::lock_guard lock(mutex_);
    if (attribution_ && attribution_key == attribution_key_) attribution = attribution_;
  }
  if (!attribution) {
    auto text = std::make_shared<std::string>();
    render_attribution(*text, views, context);
    attribution = std::move(text);
    std::lock_guard lock(mutex_);
    attribution_key_ = std::move(attribution_key);
    attribution_ = attribution;
  }
  Parts parts{samples, attribution, {}};
  render_status(parts.status, views, context);
  render_self(parts.status, context);
  render_duration(parts.status, start);
  return parts;
}


}  // namespace hipstack::smid
