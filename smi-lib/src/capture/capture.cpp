// hipstack::smi::capture (hipstack/capture.hpp, docs/captures.md): what the library reads, recorded
// through the same root view every read goes through, so a capture always holds what a later read
// of it needs; plus each amdgpu card's device folder and the KFD topology as whole folders.
#include <hipstack/capture.hpp>

#include <fmt/format.h>

#include <mutex>
#include <set>

#include "../backends/backend.hpp"
#include "../fs_view.hpp"
#include "../info/info_internal.hpp"
#include "../roots.hpp"
#include "output.hpp"
#include "sha256.hpp"

namespace hipstack::smi {
namespace detail::capture {
namespace {

constexpr std::size_t kMaxFiles = 200000;  // a hostile tree cannot make a capture endless
constexpr int kMaxDepth = 12;

// Never copied: files that act or block when read (pcie_bw takes a second) or that are not telemetry
// (PCI config space, BARs, the ROM), and the write-only controls of a PCI device.
const std::set<std::string, std::less<>> kSkipped = {"config", "rom", "remove", "rescan", "reset", "resource",
                                                     "resource0", "resource1", "resource2", "resource3",
                                                     "resource4", "resource5", "resource0_wc", "resource2_wc",
                                                     "pcie_bw", "amdgpu_reset_level", "driver_override", "new_id",
                                                     "remove_id", "bind", "unbind"};

// An FsView that remembers what it was asked for: the files read (or found to exist) and the folders
// listed. Reads are passed on unchanged.
class RecordingFs final : public FsView {
 public:
  explicit RecordingFs(const FsView& inner) : inner_(inner) {}
  FileText read_text(const std::string& path) const override {
    FileText text = inner_.read_text(path);
    if (text.ok()) note(files_, path);
    return text;
  }
  FileBytes read_bytes(const std::string& path, std::size_t max_bytes) const override {
    FileBytes bytes = inner_.read_bytes(path, max_bytes);
    if (bytes.ok()) note(files_, path);
    return bytes;
  }
  // Passed on, not recorded: the capture's copy step reads files in pieces, which the CPER ring's
  // reader of older kernels overruns (FsView::read_once).
  FileBytes read_once(const std::string& path, std::size_t size) const override { return inner_.read_once(path, size); }
  std::vector<std::string> list(const std::string& path) const override {
    std::vector<std::string> names = inner_.list(path);
    if (!names.empty()) note(folders_, path);
    return names;
  }
  bool exists(const std::string& path) const override {
    const bool found = inner_.exists(path);
    if (found) note(existing_, path);
    return found;
  }
  std::string link_target(const std::string& path) const override { return inner_.link_target(path); }
  std::string host_path(const std::string& path) const override { return inner_.host_path(path); }
  int write_text(const std::string&, std::string_view) const override { return EROFS; }  // a capture never writes
  bool recorded() const override { return inner_.recorded(); }

  // What was asked for, each set sorted (system paths).
  [[nodiscard]] std::set<std::string> files() const { return copy(files_); }
  [[nodiscard]] std::set<std::string> folders() const { return copy(folders_); }
  [[nodiscard]] std::set<std::string> existing() const { return copy(existing_); }

 private:
  void note(std::set<std::string>& set, const std::string& path) const {
    const std::lock_guard lock(mutex_);
    set.insert(path);
  }
  std::set<std::string> copy(const std::set<std::string>& set) const {
    const std::lock_guard lock(mutex_);
    return set;
  }
  const FsView& inner_;
  mutable std::mutex mutex_;
  mutable std::set<std::string> files_, folders_, existing_;
};

// Copies from the source trees into the output, each file once, and keeps the manifest.
class Recorder {
 public:
  Recorder(Output& out, CaptureResult& result, bool pcie_bw) : out_(out), result_(result), pcie_bw_(pcie_bw) {}

  std::string manifest = "# sha256\tbytes\tmode\tpath (hipstack-smi capture; docs/captures.md)\n";

  // One regular file: tree/relative goes to OUT/prefix/relative.
  void copy_file(const SourceTree& tree, const stdfs::path& prefix, const stdfs::path& relative) {
    if (!result_.error.empty() || result_.files + result_.skipped >= kMaxFiles) return;
    const stdfs::path target = prefix / relative;
    if (!written_.insert(target.string()).second) return;
    if (kSkipped.count(relative.filename().string()) != 0 && !(pcie_bw_ && relative.filename() == "pcie_bw")) return;
    std::string data;
    mode_t mode = 0;
    if (!tree.read(relative, data, mode)) {
      ++result_.skipped;
      return;
    }
    if (!out_.write(target, data, mode, result_.error)) return;
    manifest += fmt::format("{}\t{}\t{:04o}\t{}\n", sha256_hex(data), data.size(), mode & 0666, target.string());
    ++result_.files;
  }

  // A folder's regular files; descends into the real sub-folders `subfolders` names, or into all of
  // them when `deep`. Links are counted, never followed.
  void copy_folder(const SourceTree& tree, const stdfs::path& prefix, const stdfs::path& relative,
                   const std::set<std::string, std::less<>>& subfolders, bool deep, int depth = 0) {
    if (depth > kMaxDepth) return;
    for (const SourceTree::Entry& entry : tree.entries(relative)) {
      if (!result_.error.empty() || result_.files + result_.skipped >= kMaxFiles) return;
      switch (entry.kind) {
        case SourceTree::Kind::link: ++result_.links; break;  // device, driver, subsystem: back up the tree
        case SourceTree::Kind::folder:
          if (deep || subfolders.count(entry.name) != 0) copy_folder(tree, prefix, relative / entry.name, {}, true, depth + 1);
          break;
        case SourceTree::Kind::file: copy_file(tree, prefix, relative / entry.name); break;
        default: ++result_.skipped; break;  // FIFOs, sockets, devices: never opened
      }
    }
  }

  void make_folder(const stdfs::path& target) {
    if (!result_.error.empty() || written_.size() >= kMaxFiles) return;
    if (written_.insert(target.string()).second) out_.make_folder(target, result_.error);
  }

 private:
  Output& out_;
  CaptureResult& result_;
  bool pcie_bw_;
  std::set<std::string> written_;
};

// Every read a later look at the capture makes: discovery, every metric kind, partitions, links, bad
// pages, processes when asked, hipstack-info's agents and install checks.
void exercise(const FsView& fs, const Roots& roots, const CaptureOptions& options) {
  BackendProbe probe = probe_amdgpu(fs);
  if (probe.backend) {
    const Backend& backend = *probe.backend;
    SampleOptions all;
    all.identity = all.static_info = all.live = all.window = true;
    all.pcie_throughput = options.pcie_bw;
    for (std::size_t device = 0; device < backend.device_count(); ++device) {
      (void)backend.summary(device);
      (void)backend.fault(device, nullptr);
      std::vector<Reading> readings;
      backend.sample(device, all, readings);
      (void)backend.partitions(device);
      (void)backend.partition_names(device);
      if (options.processes) (void)backend.processes(device, 0);
      try {
        (void)backend.bad_pages(device);
      } catch (const Error&) {  // an unreadable bad-page table is the capture's to record as it is
      }
    }
    (void)backend.links();
  }
  std::vector<std::string> errors;
  const std::vector<Agent> agents = info::read_kfd_agents(fs, errors);
  (void)info::run_install_checks(fs, roots, agents, {}, info::current_identity());
}

// "/sys/class/drm" -> (the sys tree, "class/drm"); other roots (/dev) are not captured.
struct Place {
  const SourceTree* tree = nullptr;
  stdfs::path prefix, relative;
};
Place place_of(const std::string& system_path, const SourceTree& sys, const SourceTree& proc) {
  const stdfs::path path = stdfs::path(system_path).lexically_normal();
  auto part = path.begin();
  if (part == path.end() || *part != "/" || ++part == path.end()) return {};
  const stdfs::path top = *part++;
  stdfs::path relative;
  for (; part != path.end(); ++part) {
    if (*part == "..") return {};
    if (!part->empty()) relative /= *part;  // "/proc/" ends in an empty name
  }
  if (top == "sys") return {&sys, "sys", relative};
  if (top == "proc") return {&proc, "proc", relative};
  return {};
}

bool is_card(const std::string& name) {
  return name.rfind("card", 0) == 0 && name.size() > 4 && name.find('-') == std::string::npos;
}

}  // namespace
}  // namespace detail::capture

CaptureResult capture(const std::string& out_dir, const CaptureOptions& options) {
  using namespace detail::capture;
  OpenOptions open;
  open.sysfs_root = options.sysfs_root;
  open.procfs_root = options.procfs_root;
  const detail::Roots roots = detail::resolve_roots(open);
  std::string error;
  std::optional<Output> out = Output::open(out_dir, error);
  if (!out) throw Error(Error::Code::invalid_argument, error);

  CaptureResult result;
  const SourceTree sys(roots.sys.empty() ? "/sys" : roots.sys);
  const SourceTree proc(roots.proc.empty() ? "/proc" : roots.proc);
  Recorder recorder(*out, result, options.pcie_bw);

  // The whole device folder of every amdgpu card (what a bug report may need beyond today's reads).
  for (const SourceTree::Entry& card : sys.entries("class/drm")) {
    if (!is_card(card.name)) continue;
    const stdfs::path device = stdfs::path("class/drm") / card.name / "device";
    std::string uevent;
    mode_t mode = 0;
    if (!sys.read(device / "uevent", uevent, mode) || uevent.find("DRIVER=amdgpu") == std::string::npos) continue;
    recorder.copy_folder(sys, "sys", device, {"hwmon", "fw_version", "xgmi_hive_info", "ras", "gpu_od"}, false);
    recorder.copy_file(sys, "sys", stdfs::path("class/drm") / card.name / "dev");
    ++result.cards;
  }
  recorder.copy_folder(sys, "sys", "class/kfd/kfd/topology", {}, true);
  recorder.copy_folder(sys, "sys", "module/amdgpu", {}, false);
  if (options.processes) recorder.copy_folder(sys, "sys", "class/kfd/kfd/proc", {}, true);

  // Everything the library reads, as it reads it.
  const detail::RootedFs live(roots.sys, roots.proc, roots.dev, /*regular_only=*/true);
  const RecordingFs recording(live);
  exercise(recording, roots, options);
  std::set<std::string> files = recording.files();
  for (const std::string& path : recording.existing()) {
    const Place place = place_of(path, sys, proc);
    if (place.tree != nullptr && place.tree->kind(place.relative) == SourceTree::Kind::file) files.insert(path);
  }
  for (const std::string& path : files) {
    const Place place = place_of(path, sys, proc);
    if (place.tree != nullptr) recorder.copy_file(*place.tree, place.prefix, place.relative);
  }
  // Listed folders, and in /sys the sub-folders they list (a card folder discovery looked into and
  // found nothing in is still there), so every listing reads back the same.
  for (const std::string& path : recording.folders()) {
    const Place place = place_of(path, sys, proc);
    if (place.tree == nullptr || !place.tree->inside(place.relative)) continue;
    const stdfs::path folder = place.relative.empty() ? place.prefix : place.prefix / place.relative;
    recorder.make_folder(folder);
    if (place.tree != &sys) continue;
    for (const SourceTree::Entry& entry : sys.entries(place.relative)) {
      const auto real = entry.kind == SourceTree::Kind::folder || entry.kind == SourceTree::Kind::link
                            ? sys.inside(place.relative / entry.name) : std::nullopt;
      if (real && stdfs::is_directory(*real)) recorder.make_folder(folder / entry.name);
    }
  }

  if (result.error.empty() && out->write("MANIFEST", recorder.manifest, 0644, result.error)) out->flush(result.error);
  return result;
}

}  // namespace hipstack::smi
