// RAS: per-block error counts (ras/<block>_err_count), retired VRAM pages (ras/gpu_vram_bad_pages)
// and the driver's bad page threshold (amdgpu module parameter).
#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "sysfs_values.hpp"

namespace hipstack::smi::detail::amdgpu {
namespace {

constexpr std::string_view kCountSuffix = "_err_count";

}  // namespace

std::optional<BadPageTable> parse_bad_pages(std::string_view text, std::string& error) {
  BadPageTable table;
  for (const std::string_view line : split_fields(text, '\n')) {
    const auto fields = split_fields(line, ':');
    if (fields.empty()) continue;
    const auto address = fields.size() == 3 ? parse_hex(fields[0]) : std::nullopt;
    const auto size = fields.size() == 3 ? parse_hex(fields[1]) : std::nullopt;
    if (!address || !size || fields[2].size() != 1 || std::string_view("RPF").find(fields[2][0]) == std::string_view::npos) {
      error = fmt::format("bad line \"{}\" (expected \"0xPFN : 0xSIZE : R|P|F\")", line);
      return std::nullopt;
    }
    const char state = fields[2][0];
    table.pages.push_back({*address, *size, state == 'R' ? "reserved" : state == 'P' ? "pending" : "failed"});
  }
  return table;
}

std::vector<BadPage> read_bad_pages(const FsView& fs, const AmdGpu& gpu, std::string& error) {
  if (gpu.device_dir.empty()) return {};
  const std::string path = gpu.device_dir + "/ras/gpu_vram_bad_pages";
  const FileText text = fs.read_text(path);
  if (!text.ok()) {
    if (text.error != ENOENT) error = fs.host_path(path) + ": " + std::strerror(text.error);
    return {};
  }
  const auto table = parse_bad_pages(text.text, error);
  if (!table) error = fs.host_path(path) + ": " + error;
  return table ? table->pages : std::vector<BadPage>{};
}

void read_ras(const FsView& fs, const AmdGpu& gpu, std::vector<Reading>& out) {
  ReadingList list(out);
  const MetricId per_block[] = {MetricId::ras_correctable, MetricId::ras_uncorrectable, MetricId::ras_deferred};
  const MetricId totals[] = {MetricId::ecc_corrected_volatile, MetricId::ecc_uncorrected_volatile};
  const MetricId pages[] = {MetricId::bad_pages_reserved, MetricId::bad_pages_pending, MetricId::bad_pages_failed};
  const std::string dir = gpu.device_dir.empty() ? std::string() : gpu.device_dir + "/ras";
  const auto entries = dir.empty() ? std::vector<std::string>{} : fs.list(dir);
  std::int64_t corrected = 0;
  std::int64_t uncorrected = 0;
  bool any_block = false;
  bool all_blocks_read = true;
  for (const std::string& entry : entries) {
    if (entry.size() <= kCountSuffix.size() ||
        entry.compare(entry.size() - kCountSuffix.size(), kCountSuffix.size(), kCountSuffix) != 0) {
      continue;
    }
    any_block = true;
    const std::string block = entry.substr(0, entry.size() - kCountSuffix.size());
    const std::string path = dir + "/" + entry;
    const FileText text = fs.read_text(path);
    if (!text.ok()) {
      for (const MetricId id : per_block) list.failed(id, text.error, fs.host_path(path) + ": " + std::strerror(text.error), block);
      all_blocks_read = false;
      continue;
    }
    // The driver answers "Query currently inaccessible" while the block cannot be asked (reset, busy).
    if (text.text.find("inaccessible") != std::string::npos) {
      for (const MetricId id : per_block) list.failed(id, EAGAIN, fs.host_path(path) + ": " + text.text, block);
      all_blocks_read = false;
      continue;
    }
    const KeyValues kv = parse_key_values(text.text, ':');
    const std::pair<MetricId, std::string_view> keys[] = {
        {MetricId::ras_correctable, "ce"}, {MetricId::ras_uncorrectable, "ue"}, {MetricId::ras_deferred, "de"}};
    for (const auto& [id, key] : keys) {
      const auto value = find_value(kv, key);
      const auto count = value ? parse_int(*value) : std::nullopt;
      if (count && *count >= 0) {
        list.integer(id, *count, path, block);
        if (id == MetricId::ras_correctable) corrected += *count;
        if (id == MetricId::ras_uncorrectable) uncorrected += *count;
      } else if (value) {
        list.malformed(id, fmt::format("{}: {} is \"{}\"", fs.host_path(path), key, *value), block);
        all_blocks_read = false;
      } else {
        list.failed(id, ENOENT, fmt::format("{}: no \"{}:\" line", fs.host_path(path), key), block);
      }
    }
  }
  if (!any_block) {
    const std::string why = dir.empty() ? "no DRM card" : fs.host_path(dir) + ": no RAS error counters";
    for (const MetricId id : per_block) list.failed(id, ENOENT, why);
    for (const MetricId id : totals) list.failed(id, ENOENT, why);
  } else if (all_blocks_read) {
    list.integer(MetricId::ecc_corrected_volatile, corrected, "sum of ras/*_err_count ce");
    list.integer(MetricId::ecc_uncorrected_volatile, uncorrected, "sum of ras/*_err_count ue");
  } else {
    for (const MetricId id : totals) list.failed(id, EAGAIN, "some RAS blocks could not be read");
  }

  std::string error;
  const auto bad = read_bad_pages(fs, gpu, error);
  const bool has_table = !gpu.device_dir.empty() && fs.exists(gpu.device_dir + "/ras/gpu_vram_bad_pages");
  if (!error.empty()) {
    for (const MetricId id : pages) list.malformed(id, error);
  } else if (!has_table) {
    for (const MetricId id : pages) list.failed(id, ENOENT, "no ras/gpu_vram_bad_pages");
  } else {
    std::int64_t counts[3] = {};
    for (const BadPage& page : bad) {
      counts[page.state == "reserved" ? 0 : page.state == "pending" ? 1 : 2] += 1;
    }
    for (std::size_t i = 0; i < 3; ++i) list.integer(pages[i], counts[i], gpu.device_dir + "/ras/gpu_vram_bad_pages");
  }
}

void read_bad_page_threshold(const FsView& fs, std::vector<Reading>& out) {
  ReadingList list(out);
  const std::string path = "/sys/module/amdgpu/parameters/bad_page_threshold";
  const FileText text = fs.read_text(path);
  if (!text.ok()) {
    list.failed(MetricId::bad_page_threshold, text.error, fs.host_path(path) + ": " + std::strerror(text.error));
    return;
  }
  const auto value = parse_int(text.text);
  if (!value) {
    list.malformed(MetricId::bad_page_threshold, fs.host_path(path) + ": \"" + text.text + "\"");
  } else if (*value < 0) {
    // -1: the driver derives it from the VRAM size; -2: retirement ignores it. Neither is a count.
    list.failed(MetricId::bad_page_threshold, ENOENT,
                fmt::format("{}: {} ({})", fs.host_path(path), *value, *value == -1 ? "driver default" : "ignored"));
  } else {
    list.integer(MetricId::bad_page_threshold, *value, path);
  }
}

}  // namespace hipstack::smi::detail::amdgpu
