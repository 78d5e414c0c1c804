// What the nvidia-smi mode adds to the library's field table (nvidia_smi_fields.hpp).
#include "nvidia_smi_fields.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace hipstack::cli {

const NvidiaSmiField& nvidia_smi_field(std::span<const NvidiaSmiField> fields, std::string_view name) {
  const NvidiaSmiField* field = find_nvidia_smi_field(fields, name);
  if (field == nullptr) throw std::logic_error(fmt::format("no nvidia-smi field \"{}\" in the table", name));
  return *field;
}

std::string nvidia_smi_program(const smi::ProcessInfo& process) {
  const std::string first = process.command_line.substr(0, process.command_line.find(' '));
  return first.empty() ? process.name : first;
}

}  // namespace hipstack::cli
