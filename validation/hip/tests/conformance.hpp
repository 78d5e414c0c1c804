// conformance.hpp: a small test harness for the HIP conformance suite (docs/validation.md).
//
// Each CONFORMANCE_CASE is one function; a failed CHECK throws out of it, the case is reported FAIL
// and the next one runs. The same sources build for AMD (hipcc) and NVIDIA (nvcc + hipstack's headers).
#pragma once

#include <hip/hip_runtime.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace conformance {

struct Case {
  const char* name;
  void (*run)();
};
std::vector<Case>& registry();

struct Register {
  Register(const char* name, void (*run)()) { registry().push_back({name, run}); }
};

struct Failure {
  std::string what;
};
[[noreturn]] void fail(const char* file, int line, const std::string& what);

// The device the cases run on, described once by main().
struct Context {
  int device = 0;
  int device_count = 0;
  hipDeviceProp_t prop{};
};
const Context& context();

template <class A, class B>
std::string describe(const char* expr_a, const char* expr_b, const A& a, const B& b) {
  std::ostringstream out;
  out << expr_a << " == " << expr_b << " (" << a << " vs " << b << ")";
  return out.str();
}

}  // namespace conformance

#define CONFORMANCE_CASE(name)                                                  \
  static void name();                                                           \
  static const ::conformance::Register name##_registration(#name, name);       \
  static void name()

#define CHECK(cond)                                                      \
  do {                                                                   \
    if (!(cond)) ::conformance::fail(__FILE__, __LINE__, "CHECK(" #cond ")"); \
  } while (0)

#define CHECK_EQ(a, b)                                                                             \
  do {                                                                                             \
    const auto& check_a_ = (a);                                                                    \
    const auto& check_b_ = (b);                                                                    \
    if (!(check_a_ == check_b_))                                                                   \
      ::conformance::fail(__FILE__, __LINE__, ::conformance::describe(#a, #b, check_a_, check_b_)); \
  } while (0)

#define CHECK_HIP(call)                                                                                    \
  do {                                                                                                     \
    const hipError_t check_e_ = (call);                                                                    \
    if (check_e_ != hipSuccess)                                                                            \
      ::conformance::fail(__FILE__, __LINE__, std::string(#call) + " returned " + hipGetErrorName(check_e_)); \
  } while (0)

// The call must fail with this error.
#define CHECK_HIP_ERROR(call, expected)                                                              \
  do {                                                                                               \
    const hipError_t check_e_ = (call);                                                              \
    if (check_e_ != (expected))                                                                      \
      ::conformance::fail(__FILE__, __LINE__, std::string(#call) + " returned " + hipGetErrorName(check_e_) + \
                                                  ", expected " + hipGetErrorName(expected));       \
  } while (0)
