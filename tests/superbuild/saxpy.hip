// A small HIP program for tests/superbuild/test_amd_prefix.sh: compiled with the staged prefix's hipcc
// for gfx90a, it must hold gfx90a code and load the prefix's HIP runtime. Exit 0 pass, 1 a check or a
// HIP call failed, 77 no GPU (skip).
#include <hip/hip_runtime.h>
#include <cmath>
#include <cstdio>
#include <vector>

__global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) y[i] = a * x[i] + y[i];
}

#define CHECK(call)                                                                  \
  do {                                                                               \
    hipError_t err_ = (call);                                                        \
    if (err_ != hipSuccess) {                                                        \
      std::fprintf(stderr, "%s failed: %s\n", #call, hipGetErrorString(err_));      \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

int main() {
  int count = 0;
  if (hipGetDeviceCount(&count) != hipSuccess || count == 0) {
    std::printf("no GPU\n");
    return 77;
  }
  const int n = 1 << 20;
  std::vector<float> x(n, 1.0f), y(n, 2.0f);
  float *dx = nullptr, *dy = nullptr;
  CHECK(hipMalloc(&dx, n * sizeof(float)));
  CHECK(hipMalloc(&dy, n * sizeof(float)));
  CHECK(hipMemcpy(dx, x.data(), n * sizeof(float), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dy, y.data(), n * sizeof(float), hipMemcpyHostToDevice));
  saxpy<<<(n + 255) / 256, 256>>>(3.0f, dx, dy, n);
  CHECK(hipGetLastError());
  CHECK(hipMemcpy(y.data(), dy, n * sizeof(float), hipMemcpyDeviceToHost));
  CHECK(hipFree(dx));
  CHECK(hipFree(dy));
  for (int i = 0; i < n; ++i) {
    if (std::fabs(y[i] - 5.0f) > 1e-6f) {
      std::fprintf(stderr, "y[%d] = %g, expected 5\n", i, static_cast<double>(y[i]));
      return 1;
    }
  }
  std::printf("saxpy: %d elements correct\n", n);
  return 0;
}
