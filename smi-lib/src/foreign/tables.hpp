// The foreign-name tables, one file per tool (hipstack/foreign_names.hpp): what foreign_names.cpp
// looks them up in.
#pragma once

#include <hipstack/foreign_names.hpp>

#include <span>

namespace hipstack::smi::foreign {

std::span<const ForeignName> pynvml_table() noexcept;  // pynvml.cpp
std::span<const ForeignName> amdsmi_table() noexcept;  // amdsmi.cpp
std::span<const ForeignName> nfd_table() noexcept;     // nfd.cpp
std::span<const ForeignName> rocm_smi_table() noexcept;  // rocm_smi.cpp
std::span<const ForeignName> job_summary_table() noexcept;  // job_summary.cpp

}  // namespace hipstack::smi::foreign
