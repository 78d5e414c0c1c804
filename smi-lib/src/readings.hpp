// Building lists of readings inside backends: one call per outcome, so a backend states what it
// found (a value, absence, an error with the path) and never formats statuses by hand.
#pragma once

#include <hipstack/smi.hpp>

#include <array>
#include <cerrno>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "fs_view.hpp"

namespace hipstack::smi::detail {

class ReadingList {
 public:
  explicit ReadingList(std::vector<Reading>& out) : out_(out) {}

  void real(MetricId id, double value, std::string detail, std::string instance = {}) {
    push(id, std::move(instance), Status::ok, 0, value, std::move(detail));
  }
  void integer(MetricId id, std::int64_t value, std::string detail, std::string instance = {}) {
    push(id, std::move(instance), Status::ok, 0, value, std::move(detail));
  }
  void text(MetricId id, std::string value, std::string detail, std::string instance = {}) {
    push(id, std::move(instance), Status::ok, 0, std::move(value), std::move(detail));
  }
  // A failed read: ENOENT means the driver does not provide it; EBUSY/EAGAIN/EACCES/ETIMEDOUT/
  // ENODATA mean it exists but cannot be read now; anything else is an error.
  void failed(MetricId id, int error_code, std::string detail, std::string instance = {});
  // Data that was read but did not parse.
  void malformed(MetricId id, std::string detail, std::string instance = {}) {
    push(id, std::move(instance), Status::error, EINVAL, std::monostate{}, std::move(detail));
  }

 private:
  void push(MetricId id, std::string instance, Status status, int error_code, Value value, std::string detail) {
    Reading r;
    r.id = id;
    r.instance = std::move(instance);
    r.status = status;
    r.error_code = error_code;
    r.value = std::move(value);
    r.detail = std::move(detail);
    out_.push_back(std::move(r));
  }
  std::vector<Reading>& out_;
};

Status status_for_errno(int error_code) noexcept;

// Every catalogue id is below this (catalogue.cpp asserts it), so tables indexed by id (flags of a
// sample, positions in the catalogue) have this many entries.
inline constexpr std::uint32_t kMetricIdSpace = 1024;

// A metric's entry in a table indexed by id.
constexpr std::uint32_t id_slot(MetricId id) { return static_cast<std::uint32_t>(id) % kMetricIdSpace; }

// Whether a sample asked for any of a group of metrics (an empty list asks for everything), by a
// table of flags made once per sample: a backend asks ~60 times a sample, so a poller's one-metric
// sample reads only the files or calls that metric needs. add() takes in what another asked metric
// needs (energy needs power).
class AskedFor {
 public:
  explicit AskedFor(const SampleOptions& options) : everything_(options.metrics.empty()) {
    for (const MetricId id : options.metrics) add(id);
  }
  bool operator()(std::initializer_list<MetricId> ids) const {
    if (everything_) return true;
    for (const MetricId id : ids) {
      const auto bit = id_slot(id);
      if ((asked_[bit / 64] >> (bit % 64)) & 1U) return true;
    }
    return false;
  }
  void add(MetricId id) {
    const auto bit = id_slot(id);
    asked_[bit / 64] |= std::uint64_t{1} << (bit % 64);
  }

 private:
  bool everything_;
  std::array<std::uint64_t, kMetricIdSpace / 64> asked_{};
};

// Whether a sample asked for id (an empty list asks for everything).
inline bool asked_for(const SampleOptions& options, MetricId id) {
  for (const MetricId m : options.metrics) {
    if (m == id) return true;
  }
  return options.metrics.empty();
}

}  // namespace hipstack::smi::detail
