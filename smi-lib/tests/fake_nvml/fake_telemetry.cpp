// Readings and health: field values, utilization, ECC error counts, retired pages, remapped rows.
#include <chrono>
#include <string>
#include <vector>

#include "fake_state.hpp"

namespace fake_nvml {

using namespace detail;

// ---- Field values --------------------------------------------------------------------------------------

extern "C" Return fake_nvml_impl_field_values(Device device, int count, FieldValue* values) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (count < 0 || (count > 0 && !values)) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("field_values");
  const long long now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  for (int i = 0; i < count; ++i) {
    FieldValue& f = values[i];
    const std::string key = "field." + std::to_string(f.fieldId);
    f.timestamp = now_us;
    f.latencyUsec = 0;
    f.value = Value{};
    if (Return e = decode_return(find(d, key + ".error"))) {
      f.nvmlReturn = e;
      continue;
    }
    const std::string* v = find(d, key);
    if (!v) {
      f.nvmlReturn = kErrorNotSupported;
      continue;
    }
    const std::string* type = find(d, key + ".type");
    f.valueType = type ? *parse_value_type(*type) : 1;
    f.value = *parse_field_value(*v, f.valueType);
    f.nvmlReturn = kSuccess;
  }
  return kSuccess;
}

// ---- Activity ----------------------------------------------------------------------------------------

extern "C" Return fake_nvml_impl_utilization(Device device, Utilization* u) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!u) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("utilization");
  if (!find(d, "utilization.gpu")) return kErrorNotSupported;
  u->gpu = static_cast<unsigned>(uint_or(d, "utilization.gpu", 0));
  u->memory = static_cast<unsigned>(uint_or(d, "utilization.memory", 0));
  return kSuccess;
}

namespace {
Return codec_query(Device device, const char* member, unsigned* percent, unsigned* period_us) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!percent || !period_us) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED(member);
  if (Return r = read_uint(d, member, percent)) return r;
  *period_us = static_cast<unsigned>(uint_or(d, std::string(member) + ".period_us", 1000000));
  return kSuccess;
}
}  // namespace

extern "C" Return fake_nvml_impl_encoder_utilization(Device device, unsigned* percent, unsigned* period_us) {
  return codec_query(device, "encoder_utilization", percent, period_us);
}
extern "C" Return fake_nvml_impl_decoder_utilization(Device device, unsigned* percent, unsigned* period_us) {
  return codec_query(device, "decoder_utilization", percent, period_us);
}

// ---- ECC and memory health ---------------------------------------------------------------------------

extern "C" Return fake_nvml_impl_total_ecc_errors(Device device, int type, int counter, unsigned long long* count) {
  FAKE_NVML_ENTER_DEVICE(device);
  const char* type_name = enum_name(kEccTypeNames, type);
  const char* counter_name = enum_name(kEccCounterNames, counter);
  if (!type_name || !counter_name || !count) return kErrorInvalidArgument;
  const std::string sub = std::string(type_name) + "." + counter_name;
  FAKE_NVML_SCRIPTED("total_ecc_errors", sub);
  return read_uint(d, "total_ecc_errors." + sub, count);
}

extern "C" Return fake_nvml_impl_retired_pages(Device device, int cause, unsigned* count, unsigned long long* addresses) {
  FAKE_NVML_ENTER_DEVICE(device);
  const char* name = enum_name(kRetirementCauseNames, cause);
  if (!name || !count) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("retired_pages", name);
  const std::string* v = find(d, std::string("retired_pages.") + name);
  if (!v) return kErrorNotSupported;
  const std::vector<unsigned long long> pages = *parse_addresses(*v);
  const auto n = static_cast<unsigned>(pages.size());
  if (*count < n) {
    *count = n;
    return kErrorInsufficientSize;
  }
  if (n > 0 && !addresses) return kErrorInvalidArgument;
  for (unsigned i = 0; i < n; ++i) addresses[i] = pages[i];
  *count = n;
  return kSuccess;
}

extern "C" Return fake_nvml_impl_remapped_rows(Device device, unsigned* corrected, unsigned* uncorrected,
                                                unsigned* pending, unsigned* failed) {
  FAKE_NVML_ENTER_DEVICE(device);
  if (!corrected || !uncorrected || !pending || !failed) return kErrorInvalidArgument;
  FAKE_NVML_SCRIPTED("remapped_rows");
  if (!find(d, "remapped_rows.correctable")) return kErrorNotSupported;
  *corrected = static_cast<unsigned>(uint_or(d, "remapped_rows.correctable", 0));
  *uncorrected = static_cast<unsigned>(uint_or(d, "remapped_rows.uncorrectable", 0));
  *pending = bool_or(d, "remapped_rows.pending", false) ? 1 : 0;
  *failed = bool_or(d, "remapped_rows.failure", false) ? 1 : 0;
  return kSuccess;
}

// ---- Exports: one alias per NVML name the variant keeps, for the members this file defines ------------
#define FAKE_NVML_DEFINED_HERE_field_values FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_utilization FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_encoder_utilization FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_decoder_utilization FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_total_ecc_errors FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_retired_pages FAKE_NVML_PROBE()
#define FAKE_NVML_DEFINED_HERE_remapped_rows FAKE_NVML_PROBE()
HIPSTACK_NVML_SYMBOLS(FAKE_NVML_EXPORT_DEFINED_HERE)

}  // namespace fake_nvml
