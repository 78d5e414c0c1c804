// Generation of the exported NVML entry points from HIPSTACK_NVML_SYMBOLS (nvml_api.hpp), so the list
// of names and their signatures cannot drift from what the backend loads.
//
// For every X(member, signature, names...) of the X-macro:
//   * FAKE_NVML_DECLARE_IMPL declares `extern "C" fake_nvml_impl_<member>` with exactly `signature`
//     (hidden); one of the fake_*.cpp files defines it, and a definition with another signature is a
//     compile error (conflicting declarations of a C function).
//   * FAKE_NVML_EXPORT_DEFINED_HERE declares, in the file that defines the member, for each exported
//     name the variant keeps, a default-visibility alias of that implementation whose assembler name is
//     the NVML name (`__asm__("nvmlInit_v2")`). An alias of an implementation that is not defined in the
//     translation unit does not compile.
//   * FAKE_NVML_REQUIRE_EXPORTED (once, in fake_nvml.cpp) makes the link fail for a member that no file
//     exports, or that two files export.
//
// Variants (FAKE_NVML_VARIANT): 1 full (every name), 2 old (only the last, oldest, name of each
// member, and not the members an older driver lacks), 3 broken (no nvmlDeviceGetHandleByIndex*).
#pragma once

#define FAKE_NVML_VARIANT_FULL 1
#define FAKE_NVML_VARIANT_OLD 2
#define FAKE_NVML_VARIANT_BROKEN 3

#ifndef FAKE_NVML_VARIANT
#error "define FAKE_NVML_VARIANT (1 full, 2 old, 3 broken)"
#endif

// ---- Preprocessor helpers ------------------------------------------------------------------------
#define FAKE_NVML_CAT(a, b) FAKE_NVML_CAT_I(a, b)
#define FAKE_NVML_CAT_I(a, b) a##b
#define FAKE_NVML_CAT3(a, b, c) FAKE_NVML_CAT3_I(a, b, c)
#define FAKE_NVML_CAT3_I(a, b, c) a##b##c
#define FAKE_NVML_FIRST(a, ...) a
#define FAKE_NVML_SECOND(a, b, ...) b
// 1 when `x` expands to FAKE_NVML_PROBE(), else 0.
#define FAKE_NVML_PROBE() ~, 1
#define FAKE_NVML_IS_PROBE(...) FAKE_NVML_SECOND(__VA_ARGS__, 0, )
#define FAKE_NVML_NOT(x) FAKE_NVML_CAT(FAKE_NVML_NOT_, x)
#define FAKE_NVML_NOT_0 1
#define FAKE_NVML_NOT_1 0
#define FAKE_NVML_AND(a, b) FAKE_NVML_CAT3(FAKE_NVML_AND_, a, b)
#define FAKE_NVML_AND_00 0
#define FAKE_NVML_AND_01 0
#define FAKE_NVML_AND_10 0
#define FAKE_NVML_AND_11 1
// 1 when the argument list is empty (the name being looked at is the last one), else 0.
#define FAKE_NVML_IS_LAST(...) FAKE_NVML_FIRST(__VA_OPT__(0, ) 1)

// FAKE_NVML_FOR_EACH(m, member, a, b, c) -> m(member, a, 0) m(member, b, 0) m(member, c, 1)
#define FAKE_NVML_PARENS ()
#define FAKE_NVML_EXPAND(...) FAKE_NVML_EXPAND3(FAKE_NVML_EXPAND3(FAKE_NVML_EXPAND3(__VA_ARGS__)))
#define FAKE_NVML_EXPAND3(...) FAKE_NVML_EXPAND1(FAKE_NVML_EXPAND1(FAKE_NVML_EXPAND1(__VA_ARGS__)))
#define FAKE_NVML_EXPAND1(...) __VA_ARGS__
#define FAKE_NVML_FOR_EACH(m, member, ...) __VA_OPT__(FAKE_NVML_EXPAND(FAKE_NVML_FOR_EACH_I(m, member, __VA_ARGS__)))
#define FAKE_NVML_FOR_EACH_I(m, member, name, ...) \
  m(member, name, FAKE_NVML_IS_LAST(__VA_ARGS__)) __VA_OPT__(FAKE_NVML_FOR_EACH_AGAIN FAKE_NVML_PARENS(m, member, __VA_ARGS__))
#define FAKE_NVML_FOR_EACH_AGAIN() FAKE_NVML_FOR_EACH_I

// ---- Which names a variant keeps -----------------------------------------------------------------
// Members an older driver does not have at all (old variant).
#define FAKE_NVML_OLD_LACKS_memory_v2 FAKE_NVML_PROBE()
#define FAKE_NVML_OLD_LACKS_total_energy FAKE_NVML_PROBE()
#define FAKE_NVML_OLD_LACKS_gpm_query_support FAKE_NVML_PROBE()
#define FAKE_NVML_OLD_LACKS_gpm_sample_alloc FAKE_NVML_PROBE()
#define FAKE_NVML_OLD_LACKS_gpm_sample_free FAKE_NVML_PROBE()
#define FAKE_NVML_OLD_LACKS_gpm_sample_get FAKE_NVML_PROBE()
#define FAKE_NVML_OLD_LACKS_gpm_metrics_get FAKE_NVML_PROBE()
// The required member the broken variant lacks.
#define FAKE_NVML_BROKEN_LACKS_device_by_index FAKE_NVML_PROBE()

#define FAKE_NVML_OLD_KEEPS(member) FAKE_NVML_NOT(FAKE_NVML_IS_PROBE(FAKE_NVML_CAT(FAKE_NVML_OLD_LACKS_, member)))
#define FAKE_NVML_BROKEN_KEEPS(member) \
  FAKE_NVML_NOT(FAKE_NVML_IS_PROBE(FAKE_NVML_CAT(FAKE_NVML_BROKEN_LACKS_, member)))

#if FAKE_NVML_VARIANT == FAKE_NVML_VARIANT_FULL
#define FAKE_NVML_KEEP(member, last) 1
#elif FAKE_NVML_VARIANT == FAKE_NVML_VARIANT_OLD
#define FAKE_NVML_KEEP(member, last) FAKE_NVML_AND(last, FAKE_NVML_OLD_KEEPS(member))
#elif FAKE_NVML_VARIANT == FAKE_NVML_VARIANT_BROKEN
#define FAKE_NVML_KEEP(member, last) FAKE_NVML_BROKEN_KEEPS(member)
#else
#error "unknown FAKE_NVML_VARIANT"
#endif

// ---- Declarations ----------------------------------------------------------------------------------
#define FAKE_NVML_DECLARE_IMPL(member, signature, ...) \
  using fake_nvml_sig_##member = signature;            \
  extern "C" fake_nvml_sig_##member fake_nvml_impl_##member;

#define FAKE_NVML_ALIAS(member, name, id)                                                         \
  extern "C" fake_nvml_sig_##member FAKE_NVML_CAT(fake_nvml_export_, id) __asm__(name)            \
      __attribute__((alias("fake_nvml_impl_" #member), visibility("default")));
#define FAKE_NVML_EMIT_1(member, name) FAKE_NVML_ALIAS(member, name, FAKE_NVML_CAT3(member, _, __COUNTER__))
#define FAKE_NVML_EMIT_0(member, name)
#define FAKE_NVML_EXPORT_ONE(member, name, last) \
  FAKE_NVML_CAT(FAKE_NVML_EMIT_, FAKE_NVML_KEEP(member, last))(member, name)

// ---- Exports, from the file that defines the implementation ----------------------------------------
// An alias must be in the translation unit that defines its target, so each fake_*.cpp exports its own
// members: it marks each one with `#define FAKE_NVML_DEFINED_HERE_<member> FAKE_NVML_PROBE()` and ends
// with HIPSTACK_NVML_SYMBOLS(FAKE_NVML_EXPORT_DEFINED_HERE). Every member so exported also gets the
// hidden alias fake_nvml_exported_<member>, which FAKE_NVML_REQUIRE_EXPORTED references for every
// member: one that no file exports fails the link ("hidden symbol ... isn't defined"), one that two
// files export is defined twice.
#define FAKE_NVML_IS_HERE(member) FAKE_NVML_IS_PROBE(FAKE_NVML_CAT(FAKE_NVML_DEFINED_HERE_, member))
#define FAKE_NVML_EXPORT_DEFINED_HERE(member, signature, ...) \
  FAKE_NVML_CAT(FAKE_NVML_EXPORT_HERE_, FAKE_NVML_IS_HERE(member))(member, __VA_ARGS__)
#define FAKE_NVML_EXPORT_HERE_0(member, ...)
#define FAKE_NVML_EXPORT_HERE_1(member, ...)                                                          \
  extern "C" fake_nvml_sig_##member fake_nvml_exported_##member                                       \
      __attribute__((alias("fake_nvml_impl_" #member), visibility("hidden")));                        \
  FAKE_NVML_FOR_EACH(FAKE_NVML_EXPORT_ONE, member, __VA_ARGS__)
#define FAKE_NVML_REQUIRE_EXPORTED(member, signature, ...)                                              \
  extern "C" __attribute__((visibility("hidden"))) fake_nvml_sig_##member fake_nvml_exported_##member; \
  [[gnu::used]] static fake_nvml_sig_##member* const fake_nvml_required_##member = &fake_nvml_exported_##member;
