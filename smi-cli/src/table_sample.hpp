// What a `static` or `metric` table samples: the metrics asked for and, in the same sample, the
// context the table prints beside them (each value's limit, the violation window, gfx_target to
// name throttle bits), told apart again after the sample (table_values.hpp renders them).
#pragma once

#include <hipstack/smi.hpp>

#include <span>
#include <vector>

namespace hipstack::cli {

// Names metric `id` in `what` and asks for its kind (a sample of named metrics reads only the kinds
// asked; device_source.hpp's kind_asked says which those are).
void ask_for(smi::SampleOptions& what, smi::MetricId id);

// The metrics a table of the metrics SHOWN needs beside them and that SHOWN lacks; empty when none.
std::vector<smi::MetricId> context_metrics(std::span<const smi::MetricId> shown);

// A sample asking for the metrics of `what` and, when `table`, their context: each kind's metrics
// by name then, so that one sample carries both.
struct SampleWithContext {
  smi::SampleOptions options;
  std::vector<bool> asked_ids;  // by id: what the caller asked for (the rest is context)

  [[nodiscard]] bool asked(smi::MetricId id) const {
    const auto slot = static_cast<std::size_t>(id);
    return slot < asked_ids.size() && asked_ids[slot];
  }
};

SampleWithContext with_table_context(const smi::SampleOptions& what, bool table);

}  // namespace hipstack::cli
