// plan.cpp: the module table and the evaluation of each module's JSON result. Module output is
// untrusted: a missing or mistyped field is an error naming it (std::runtime_error), never a crash.
#include "plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace hipstack::validate {
namespace {

using nlohmann::json;

const json& field(const json& object, const char* key, const std::string& where) {
  if (!object.is_object() || !object.contains(key)) throw std::runtime_error(fmt::format("no \"{}\" in {}", key, where));
  return object.at(key);
}
double number(const json& object, const char* key, const std::string& where) {
  const json& v = field(object, key, where);
  if (!v.is_number()) throw std::runtime_error(fmt::format("\"{}\" in {} is not a number", key, where));
  return v.get<double>();
}
std::string text(const json& object, const char* key, const std::string& where) {
  const json& v = field(object, key, where);
  if (!v.is_string()) throw std::runtime_error(fmt::format("\"{}\" in {} is not a string", key, where));
  return v.get<std::string>();
}
// A device number: a whole number in a sane range (a double cast to int out of range is undefined).
int device_number(const json& object, const char* key, const std::string& where) {
  const json& v = field(object, key, where);
  if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 65535)
    throw std::runtime_error(fmt::format("\"{}\" in {} is not a device number", key, where));
  return v.get<int>();
}
// An optional true/false field: absent gives nullopt. Anything but a JSON boolean (0, "false", null)
// is malformed output, never taken for a pass: `json == false` would let 0 and "false" through.
std::optional<bool> flag(const json& object, const char* key, const std::string& where) {
  if (!object.is_object() || !object.contains(key)) return std::nullopt;
  const json& v = object.at(key);
  if (!v.is_boolean()) throw std::runtime_error(fmt::format("\"{}\" in {} is not true or false", key, where));
  return v.get<bool>();
}
const json& list(const json& object, const char* key, const std::string& where) {
  const json& v = field(object, key, where);
  if (!v.is_array()) throw std::runtime_error(fmt::format("\"{}\" in {} is not a list", key, where));
  return v;
}

// A figure held to a share of a reference (a peak or a link rate) when both are known.
Figure share_figure(std::string name, double value, std::string unit, std::optional<double> reference,
                    std::optional<double> share, std::string reference_name) {
  Figure f{std::move(name), value, std::move(unit)};
  f.reference = reference;
  if (reference && share) {
    f.minimum = *reference * *share;
    f.basis = fmt::format("{:.0f}% of {} {:.1f} {}", *share * 100, reference_name, *reference, f.unit);
    f.verdict = value >= *f.minimum ? Verdict::pass : Verdict::fail;
  } else if (reference) {
    f.basis = fmt::format("{} {:.1f} {} (no threshold for this GPU)", reference_name, *reference, f.unit);
  } else {
    f.basis = "no threshold for this GPU";
  }
  return f;
}

std::string class_name(const Unit& u) { return u.device_class ? u.device_class->name : "no class"; }
std::optional<double> expected(const Unit& u, const char* key) {
  return u.device_class ? u.device_class->expected(key) : std::nullopt;
}
std::optional<double> peak(const Unit& u, const char* key) {
  return u.device_class ? u.device_class->peak_for(key, u.compute_units) : std::nullopt;
}

Figure error_count(std::string name, double errors) {
  Figure f{std::move(name), errors, "errors"};
  f.maximum = 0;
  f.basis = "any error fails";
  f.verdict = errors == 0 ? Verdict::pass : Verdict::fail;
  return f;
}

// ---- evaluations ----

void eval_vector_add(const json& out, const EvalContext&, TestResult& r) {
  r.add(error_count("wrong elements", number(out, "wrong_elements", "vector_add output")));
  Figure t{"kernel time", number(out, "kernel_ms", "vector_add output"), "ms"};
  r.add(t);
}

void eval_stream(const json& out, const EvalContext& c, TestResult& r) {
  const Unit& u = *c.unit;
  // The class's published peak; else the runtime's memory clock x bus width.
  std::optional<double> reference = peak(u, "memory_gbps");
  std::string reference_name = "peak memory bandwidth (" + class_name(u) + ")";
  if (!reference) {
    reference = number(field(out, "device", "stream output"), "peak_memory_gbps", "stream output.device");
    reference_name = "memory clock x bus width";
  }
  for (const json& k : list(out, "kernels", "stream output")) {
    const std::string name = text(k, "kernel", "stream output.kernels[]");
    const double gbps = number(k, "best_gbps", "stream output.kernels[" + name + "]");
    const bool held = name == "copy" || name == "triad";
    r.add(share_figure(name, gbps, "GB/s", reference, held ? expected(u, "memory_bandwidth") : std::nullopt,
                       reference_name));
  }
}

void eval_transfer(const json& out, const EvalContext& c, TestResult& r) {
  const Unit& u = *c.unit;
  for (const json& copy : list(out, "copies", "transfer output")) {
    const std::string memory = text(copy, "memory", "transfer output.copies[]");
    const std::string direction = text(copy, "direction", "transfer output.copies[]");
    const std::string name = memory + " " + direction;
    const double gbps = number(copy, "best_gbps", "transfer output.copies[" + name + "]");
    const bool held = memory == "pinned";
    r.add(share_figure(name, gbps, "GB/s", u.pcie_link_gbps, held ? expected(u, "transfer") : std::nullopt,
                       "PCIe link " + u.pcie_link));
    if (flag(copy, "verified", "transfer output.copies[" + name + "]") == false) r.add(error_count(name + " data", 1));
  }
}

void eval_memtest(const json& out, const EvalContext&, TestResult& r) {
  for (const json& p : list(out, "patterns", "memtest output")) {
    const std::string name = text(p, "pattern", "memtest output.patterns[]");
    r.add(error_count(name, number(p, "errors", "memtest output.patterns[" + name + "]")));
  }
  Figure tested{"bytes tested", number(out, "bytes_tested", "memtest output"), "B"};
  r.add(tested);
  r.add(error_count("total", number(out, "errors", "memtest output")));
}

void eval_gemm(const json& out, const EvalContext& c, TestResult& r) {
  const Unit& u = *c.unit;
  for (const json& run : list(out, "runs", "gemm output")) {
    const std::string precision = text(run, "precision", "gemm output.runs[]");
    const std::string backend = text(run, "backend", "gemm output.runs[" + precision + "]");
    const double tflops = number(run, "tflops", "gemm output.runs[" + precision + "]");
    const std::string name = precision + " GEMM (" + backend + ")";
    const bool vendor_blas = backend != "tiled";
    const std::string key = "gemm_" + precision;
    r.add(share_figure(name, tflops, "TFLOPS", peak(u, (precision + "_tflops").c_str()),
                       vendor_blas ? expected(u, key.c_str()) : std::nullopt,
                       "dense " + precision + " peak (" + class_name(u) + ")"));
    if (flag(run, "verified", "gemm output.runs[" + precision + "]") == false) r.add(error_count(name + " result", 1));
    if (!vendor_blas)
      r.warn("no vendor BLAS was found, so the GEMM ran on hipstack's tiled kernel and its speed is not judged "
             "(install cuBLAS or rocBLAS)");
  }
}

void eval_stress(const json& out, const EvalContext& c, TestResult& r) {
  const Unit& u = *c.unit;
  r.add(error_count("wrong results", number(out, "errors", "stress output")));
  r.add(share_figure("fp32 FMA rate", number(out, "tflops", "stress output"), "TFLOPS", peak(u, "fp32_vector_tflops"),
                     expected(u, "stress_fp32"), "fp32 vector peak (" + class_name(u) + ")"));
}

// p2p numbers the GPUs it was shown 0, 1, ... (the runner shows it context.units, in order, through
// the runtime's visibility variable): back to the runtime's numbers, which the report uses.
const Unit& p2p_unit(const json& pair, const char* key, const EvalContext& c) {
  const auto position = static_cast<std::size_t>(device_number(pair, key, "p2p output.pairs[]"));
  if (position >= c.units.size())
    throw std::runtime_error(fmt::format("\"{}\" in p2p output.pairs[] is device {}, but the module was shown {} GPU(s)",
                                         key, position, c.units.size()));
  return c.units[position];
}

void eval_p2p(const json& out, const EvalContext& c, TestResult& r) {
  for (const json& pair : list(out, "pairs", "p2p output")) {
    const Unit& source = p2p_unit(pair, "src", c);
    const Unit& destination = p2p_unit(pair, "dst", c);
    const std::string name = fmt::format("{} -> {}", source.runtime_index, destination.runtime_index);
    const std::optional<double> floor = expected(source, "p2p_gbps");
    const std::string where = "p2p output.pairs[" + name + "]";
    const bool peer_access = flag(pair, "peer_access", where).value_or(true);
    for (const char* kind : {"unidirectional_gbps", "bidirectional_gbps"}) {
      Figure f{name + (kind[0] == 'u' ? " one way" : " both ways"), number(pair, kind, where), "GB/s"};
      if (floor && peer_access && kind[0] == 'u') {
        f.minimum = *floor;
        f.basis = fmt::format("at least {:.0f} GB/s between peers ({})", *floor, class_name(source));
        f.verdict = f.value >= *floor ? Verdict::pass : Verdict::fail;
      }
      r.add(f);
    }
    if (!peer_access) r.warn(name + ": no peer access; copies went through host memory");
    if (flag(pair, "verified", where) == false) r.add(error_count(name + " data", 1));
  }
}

// ---- arguments and time limits per level ----

std::vector<std::string> args_none(int) { return {}; }
std::vector<std::string> args_stream(int level) {
  // 1 GiB arrays at every level: with 256 MiB an H200's copy reached only 83% of its peak (90% with
  // 1 GiB on an H100), too close to the threshold; the run still takes about a second.
  if (level <= 2) return {"--repeats", "20"};
  if (level == 3) return {};  // 50 repeats
  return {"--repeats", "200"};
}
std::vector<std::string> args_transfer(int level) {
  if (level <= 2) return {"--repeats", "5"};
  if (level == 3) return {};
  return {"--repeats", "50"};
}
std::vector<std::string> args_memtest(int level) {
  if (level <= 2) return {"--fraction", "0.05", "--passes", "1"};
  if (level == 3) return {"--fraction", "0.5", "--passes", "1"};
  return {"--fraction", "0.9", "--passes", "4"};
}
std::vector<std::string> args_gemm(int level) {
  if (level <= 3) return {"--precision", "fp32,bf16"};
  return {"--precision", "fp32,bf16,fp64", "--repeats", "100"};
}
std::vector<std::string> args_stress(int level) { return {"--seconds", level <= 3 ? "60" : "600"}; }
std::vector<std::string> args_p2p(int level) {
  if (level <= 3) return {};
  return {"--repeats", "50"};
}

int timeout_short(int level) { return level <= 3 ? 120 : 600; }
int timeout_memtest(int level) { return level <= 2 ? 180 : level == 3 ? 600 : 3600; }
int timeout_stress(int level) { return level <= 3 ? 180 : 900; }

constexpr Module kModules[] = {
    {"vector_add", "vector_add", 2, true, "c = a + b over 2^24 floats, every element checked", args_none, timeout_short,
     eval_vector_add},
    {"stream", "stream", 2, true, "memory bandwidth: copy, mul, add, triad, dot (copy and triad judged)", args_stream,
     timeout_short, eval_stream},
    {"transfer", "transfer", 2, true, "host<->device bandwidth, pinned (judged against the PCIe link) and pageable",
     args_transfer, timeout_short, eval_transfer},
    {"memtest", "memtest", 2, true, "walking ones, moving inversions, random patterns over a share of memory",
     args_memtest, timeout_memtest, eval_memtest},
    {"gemm", "gemm", 3, true, "fp32 and bf16 GEMM through the vendor BLAS (tiled kernel without one)", args_gemm,
     timeout_short, eval_gemm},
    {"stress", "stress", 3, true, "sustained FMA load with every result checked", args_stress, timeout_stress,
     eval_stress},
    {"p2p", "p2p", 3, false, "peer-to-peer bandwidth between every pair of GPUs (needs two)", args_p2p, timeout_short,
     eval_p2p},
};

}  // namespace

std::span<const Module> modules() { return kModules; }

const Module* find_module(std::string_view test) {
  for (const Module& m : kModules)
    if (m.test == test) return &m;
  return nullptr;
}

double pcie_rate_gbps(double gigatransfers, int lanes) {
  const double encoding = gigatransfers < 8.0 ? 8.0 / 10.0 : 128.0 / 130.0;
  return gigatransfers * encoding * lanes / 8.0;
}

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::pass: return "pass";
    case Verdict::warn: return "warn";
    case Verdict::fail: return "fail";
    case Verdict::skip: return "skip";
  }
  return "?";
}

std::string verdict_label(Verdict v) {
  std::string label(verdict_name(v));
  for (char& c : label) c = static_cast<char>(c - 'a' + 'A');  // the names are lowercase letters only
  return label;
}

Verdict worst(Verdict a, Verdict b) {
  const auto rank = [](Verdict v) { return v == Verdict::skip ? 0 : v == Verdict::pass ? 1 : v == Verdict::warn ? 2 : 3; };
  return rank(a) >= rank(b) ? a : b;
}

void TestResult::add(Figure f) {
  verdict = worst(verdict, f.verdict);
  figures.push_back(std::move(f));
}

void TestResult::warn(std::string note) {
  if (std::find(notes.begin(), notes.end(), note) != notes.end()) return;
  verdict = worst(verdict, Verdict::warn);
  notes.push_back(std::move(note));
}

}  // namespace hipstack::validate
