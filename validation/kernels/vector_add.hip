// vector_add: c = a + b on the GPU, every element checked on the host.
// --plant-error corrupts one element of the result before the check, to prove the check catches it
// (exit 1). Usage: vector_add [--size ELEMENTS] [--device N] [--json] [--plant-error]
#include "common.hpp"

#include <algorithm>
#include <vector>

__global__ void vector_add(const float* a, const float* b, float* c, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    c[i] = a[i] + b[i];
}

int main(int argc, char** argv) {
  const smoke::Options o =
      smoke::parse(argc, argv, "vector_add [--size ELEMENTS] [--device N] [--json] [--plant-error]", true);
  const hipDeviceProp_t prop = smoke::open_device(o);
  const size_t n = o.size ? static_cast<size_t>(o.size) : size_t{1} << 24;
  std::vector<float> a(n), b(n), c(n, -1.0f);
  for (size_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i % 4096) * 0.5f;
    b[i] = static_cast<float>(i % 1000) - 250.0f;
  }
  float *da = nullptr, *db = nullptr, *dc = nullptr;
  HIP_CHECK(hipMalloc(&da, n * sizeof(float)));
  HIP_CHECK(hipMalloc(&db, n * sizeof(float)));
  HIP_CHECK(hipMalloc(&dc, n * sizeof(float)));
  HIP_CHECK(hipMemcpy(da, a.data(), n * sizeof(float), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(db, b.data(), n * sizeof(float), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemset(dc, 0xff, n * sizeof(float)));  // NaN everywhere: an unwritten element fails
  const unsigned block = 256;
  const unsigned grid = static_cast<unsigned>(std::min<size_t>((n + block - 1) / block, 65535));
  hipEvent_t start, stop;
  HIP_CHECK(hipEventCreate(&start));
  HIP_CHECK(hipEventCreate(&stop));
  HIP_CHECK(hipEventRecord(start, nullptr));
  hipLaunchKernelGGL(vector_add, dim3(grid), dim3(block), 0, nullptr, da, db, dc, n);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipEventRecord(stop, nullptr));
  HIP_CHECK(hipEventSynchronize(stop));
  float ms = 0;
  HIP_CHECK(hipEventElapsedTime(&ms, start, stop));
  HIP_CHECK(hipMemcpy(c.data(), dc, n * sizeof(float), hipMemcpyDeviceToHost));
  if (o.plant_error) c[n / 2] += 1.0f;

  size_t wrong = 0, first_wrong = n;
  for (size_t i = 0; i < n; ++i)
    if (!(c[i] == a[i] + b[i])) {  // exact: one float addition on both sides; NaN is wrong
      if (wrong++ == 0) first_wrong = i;
    }
  const bool ok = wrong == 0;
  if (o.json) {
    std::printf("{\"test\": \"vector_add\", \"device\": %s, \"elements\": %zu, \"kernel_ms\": %.4f, "
                "\"planted_error\": %s, \"wrong_elements\": %zu, \"first_wrong\": %lld, \"result\": \"%s\"}\n",
                smoke::device_json(prop, o.device).c_str(), n, ms, o.plant_error ? "true" : "false", wrong,
                ok ? -1LL : static_cast<long long>(first_wrong), ok ? "pass" : "fail");
  } else {
    std::printf("vector_add on %s (%s): %zu elements, %.3f ms: %s", prop.name, prop.gcnArchName, n, ms,
                ok ? "PASS\n" : "FAIL");
    if (!ok) std::printf(", %zu wrong, first at %zu (%g != %g + %g)\n", wrong, first_wrong, c[first_wrong],
                         a[first_wrong], b[first_wrong]);
  }
  HIP_CHECK(hipFree(da));
  HIP_CHECK(hipFree(db));
  HIP_CHECK(hipFree(dc));
  return ok ? 0 : 1;
}
