// gemm: dense matrix product C = A·B (M = N = K = --size, row-major, as torch.matmul stores them) in
// fp32, bf16 (bf16 in and out, fp32 accumulation) and fp64, through the vendor BLAS (cuBLAS or rocBLAS,
// loaded at run time with dlopen, so the program runs where none is installed) or through our own
// tiled kernel. Each GEMM is timed with events after a warm-up; best and mean are reported, and every
// run is checked against the host's double-precision dot products at 256 positions.
// Usage: gemm [--precision LIST] [--size N] [--repeats N] [--backend auto|blas|tiled] [--device N]
//             [--plant-error] [--json]
#include "common.hpp"

#include <dlfcn.h>
#include <glob.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

namespace {

enum class Precision { fp32, bf16, fp64 };
const char* name_of(Precision p) { return p == Precision::fp32 ? "fp32" : p == Precision::bf16 ? "bf16" : "fp64"; }
size_t element_bytes(Precision p) { return p == Precision::fp32 ? 4 : p == Precision::bf16 ? 2 : 8; }

// ---------------------------------------------------------------------------------------------------
// bf16 as uint16_t bit patterns (the portability layer does not map hip_bf16.h): the upper half of an
// fp32, rounded to nearest even on the way down.
__host__ __device__ inline float bf16_to_float(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
__host__ __device__ inline uint16_t float_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN stays a (quiet) NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

// ---------------------------------------------------------------------------------------------------
// The tiled kernel. A block computes a 128×128 tile of C from 128×8 slices of A and 8×128 slices of B
// held in shared memory (A transposed, so a thread reads its rows as one vector). Each of the 256
// threads accumulates an 8×8 register block: rows ty*4+{0..3} and 64+ty*4+{0..3}, columns likewise
// from tx, so a warp's shared-memory reads are broadcasts (A) or one contiguous 256-byte run (B). The
// next slices are loaded into registers while the current ones are multiplied.
constexpr int kTileM = 128, kTileN = 128, kTileK = 8, kThreads = 256;
constexpr int kPad = 4;  // keeps the transposed stores of A free of bank conflicts, rows 16-byte aligned

template <class In, class Acc> struct Load4;  // four consecutive elements, as one vector load where aligned
template <> struct Load4<float, float> {
  __device__ static void run(const float* p, float (&r)[4]) {
    const float4 v = *reinterpret_cast<const float4*>(p);
    r[0] = v.x; r[1] = v.y; r[2] = v.z; r[3] = v.w;
  }
};
template <> struct Load4<uint16_t, float> {
  __device__ static void run(const uint16_t* p, float (&r)[4]) {
    const uint2 v = *reinterpret_cast<const uint2*>(p);
    r[0] = bf16_to_float(static_cast<uint16_t>(v.x & 0xffffu)); r[1] = bf16_to_float(static_cast<uint16_t>(v.x >> 16));
    r[2] = bf16_to_float(static_cast<uint16_t>(v.y & 0xffffu)); r[3] = bf16_to_float(static_cast<uint16_t>(v.y >> 16));
  }
};
template <> struct Load4<double, double> {
  __device__ static void run(const double* p, double (&r)[4]) {
    const double2 a = reinterpret_cast<const double2*>(p)[0], b = reinterpret_cast<const double2*>(p)[1];
    r[0] = a.x; r[1] = a.y; r[2] = b.x; r[3] = b.y;
  }
};

template <class In, class Acc> __device__ inline Acc to_acc(In v) { return static_cast<Acc>(v); }
template <> __device__ inline float to_acc<uint16_t, float>(uint16_t v) { return bf16_to_float(v); }
template <class Out, class Acc> __device__ inline Out from_acc(Acc v) { return static_cast<Out>(v); }
template <> __device__ inline uint16_t from_acc<uint16_t, float>(float v) { return float_to_bf16(v); }

// Two blocks per multiprocessor for fp32 accumulators (at most 128 registers a thread, which the 64
// accumulators fit); fp64's 128 accumulator registers allow one.
template <class In, class Acc>
__global__ void __launch_bounds__(kThreads, sizeof(Acc) == 4 ? 2 : 1) tiled_gemm(const In* __restrict__ a, const In* __restrict__ b,
                                                        In* __restrict__ c, int m, int n, int k) {
  __shared__ __align__(16) Acc as[kTileK][kTileM + kPad];
  __shared__ __align__(16) Acc bs[kTileK][kTileN + kPad];
  const int tid = static_cast<int>(threadIdx.x), tx = tid % 16, ty = tid / 16;
  const int row0 = static_cast<int>(blockIdx.y) * kTileM, col0 = static_cast<int>(blockIdx.x) * kTileN;
  // Global loads: A's slice is 128 rows × 8, four consecutive k per thread; B's is 8 rows × 128, four
  // consecutive columns per thread.
  const int a_row = tid / 2, a_k = (tid % 2) * 4;
  const int b_k = tid / 32, b_col = (tid % 32) * 4;
  // Vector loads need every slice inside the matrices and 4-element alignment of each row.
  const bool vector = row0 + kTileM <= m && col0 + kTileN <= n && k % kTileK == 0 && n % 4 == 0;
  Acc next_a[4], next_b[4];
  const auto load = [&](int k0) {
    if (vector) {
      Load4<In, Acc>::run(a + static_cast<size_t>(row0 + a_row) * k + k0 + a_k, next_a);
      Load4<In, Acc>::run(b + static_cast<size_t>(k0 + b_k) * n + col0 + b_col, next_b);
      return;
    }
    for (int j = 0; j < 4; ++j) {
      const int r = row0 + a_row, kk = k0 + a_k + j;
      next_a[j] = r < m && kk < k ? to_acc<In, Acc>(a[static_cast<size_t>(r) * k + kk]) : Acc(0);
      const int kb = k0 + b_k, col = col0 + b_col + j;
      next_b[j] = kb < k && col < n ? to_acc<In, Acc>(b[static_cast<size_t>(kb) * n + col]) : Acc(0);
    }
  };
  Acc acc[8][8] = {};
  load(0);
  for (int k0 = 0; k0 < k; k0 += kTileK) {
    for (int j = 0; j < 4; ++j) {
      as[a_k + j][a_row] = next_a[j];
      bs[b_k][b_col + j] = next_b[j];
    }
    __syncthreads();
    if (k0 + kTileK < k) load(k0 + kTileK);  // in flight while this slice is multiplied
#pragma unroll
    for (int kk = 0; kk < kTileK; ++kk) {
      Acc fa[8], fb[8];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        fa[i] = as[kk][ty * 4 + i];
        fa[4 + i] = as[kk][64 + ty * 4 + i];
        fb[i] = bs[kk][tx * 4 + i];
        fb[4 + i] = bs[kk][64 + tx * 4 + i];
      }
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += fa[i] * fb[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < 8; ++i) {
    const int r = row0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
    if (r >= m) continue;
    for (int j = 0; j < 8; ++j) {
      const int col = col0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
      if (col < n) c[static_cast<size_t>(r) * n + col] = from_acc<In, Acc>(acc[i][j]);
    }
  }
}

void launch_tiled(Precision p, const void* a, const void* b, void* c, int size, hipStream_t stream) {
  const dim3 grid((size + kTileN - 1) / kTileN, (size + kTileM - 1) / kTileM), block(kThreads);
  if (p == Precision::fp32)
    hipLaunchKernelGGL(HIP_KERNEL_NAME(tiled_gemm<float, float>), grid, block, 0, stream, static_cast<const float*>(a),
                       static_cast<const float*>(b), static_cast<float*>(c), size, size, size);
  else if (p == Precision::bf16)
    hipLaunchKernelGGL(HIP_KERNEL_NAME(tiled_gemm<uint16_t, float>), grid, block, 0, stream,
                       static_cast<const uint16_t*>(a), static_cast<const uint16_t*>(b), static_cast<uint16_t*>(c),
                       size, size, size);
  else
    hipLaunchKernelGGL(HIP_KERNEL_NAME(tiled_gemm<double, double>), grid, block, 0, stream,
                       static_cast<const double*>(a), static_cast<const double*>(b), static_cast<double*>(c), size,
                       size, size);
}

// ---------------------------------------------------------------------------------------------------
// The vendor BLAS, loaded with dlopen. Types, enum values and signatures are declared here from the
// libraries' documentation (checked against cublas_api.h/library_types.h of CUDA 13 and rocBLAS's
// rocblas-types.h/rocblas-functions.h), so no vendor header is needed to build. C enums are int-sized.
#ifdef HIPSTACK_HIP_NVIDIA
constexpr const char* kBlasName = "cublas";
constexpr int kOpN = 0;                                           // CUBLAS_OP_N
constexpr int kTypeF32 = 0, kTypeF64 = 1, kTypeBF16 = 14;         // CUDA_R_32F, CUDA_R_64F, CUDA_R_16BF
constexpr int kComputeF32 = 68, kComputeF64 = 70;                 // CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_64F
constexpr int kAlgoDefault = -1;                                  // CUBLAS_GEMM_DEFAULT
using CreateFn = int (*)(void** handle);                          // cublasCreate_v2
using DestroyFn = int (*)(void* handle);                          // cublasDestroy_v2
using SetStreamFn = int (*)(void* handle, hipStream_t stream);    // cublasSetStream_v2
using SetWorkspaceFn = int (*)(void* handle, void* workspace, size_t bytes);  // cublasSetWorkspace_v2
using GemmExFn = int (*)(void* handle, int transa, int transb, int m, int n, int k, const void* alpha, const void* a,
                         int a_type, int lda, const void* b, int b_type, int ldb, const void* beta, void* c, int c_type,
                         int ldc, int compute_type, int algo);    // cublasGemmEx
const char* const kCreate = "cublasCreate_v2";
const char* const kDestroy = "cublasDestroy_v2";
const char* const kSetStream = "cublasSetStream_v2";
const char* const kGemm = "cublasGemmEx";
const char* const kSonames[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"};
const char* const kLibraryDirs[] = {"/usr/local/cuda/lib64"};
const char* const kEnvDir = "CUDA_PATH";  // $CUDA_PATH/lib64
// torch's pip wheels carry their own cuBLAS, under site-packages/nvidia/.
const char* const kWheelDirs[] = {"nvidia/cu13/lib", "nvidia/cublas/lib"};
#else
constexpr const char* kBlasName = "rocblas";
constexpr int kOpN = 111;                                         // rocblas_operation_none
constexpr int kTypeF32 = 151, kTypeF64 = 152, kTypeBF16 = 168;    // rocblas_datatype_{f32,f64,bf16}_r
constexpr int kComputeF32 = 151, kComputeF64 = 152;               // rocblas_gemm_ex takes a datatype as compute type
constexpr int kAlgoDefault = 0;                                   // rocblas_gemm_algo_standard
using CreateFn = int (*)(void** handle);                          // rocblas_create_handle
using DestroyFn = int (*)(void* handle);                          // rocblas_destroy_handle
using SetStreamFn = int (*)(void* handle, hipStream_t stream);    // rocblas_set_stream
using RocGemmExFn = int (*)(void* handle, int transa, int transb, int m, int n, int k, const void* alpha, const void* a,
                            int a_type, int lda, const void* b, int b_type, int ldb, const void* beta, const void* c,
                            int c_type, int ldc, void* d, int d_type, int ldd, int compute_type, int algo,
                            int32_t solution_index, uint32_t flags);  // rocblas_gemm_ex
const char* const kCreate = "rocblas_create_handle";
const char* const kDestroy = "rocblas_destroy_handle";
const char* const kSetStream = "rocblas_set_stream";
const char* const kGemm = "rocblas_gemm_ex";
// rocBLAS 5 is ROCm 7's (the current track's, 7.2.4: gemm_ex and the enum values above unchanged in its
// rocblas-functions.h and rocblas-types.h), 4 ROCm 6's, 0 Debian 12's ROCm 5.
const char* const kSonames[] = {"librocblas.so.5", "librocblas.so.4", "librocblas.so.3", "librocblas.so.0", "librocblas.so"};
const char* const kLibraryDirs[] = {"/opt/rocm/lib"};
const char* const kEnvDir = "ROCM_PATH";  // $ROCM_PATH/lib64 (and lib, below)
// torch's ROCm wheels carry their own rocBLAS, in site-packages/torch/lib.
const char* const kWheelDirs[] = {"torch/lib"};
#endif

struct Blas {
  void* library = nullptr;
  void* handle = nullptr;
  std::string path;     // the file the loader opened
  std::string tried;    // what was looked for, for the message when nothing loads
  void* gemm = nullptr;
  void* workspace = nullptr;

  bool open(const std::string& file) {
    tried += (tried.empty() ? "" : ", ") + file;
    library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) return false;
    gemm = dlsym(library, kGemm);
    if (!gemm || !dlsym(library, kCreate) || !dlsym(library, kDestroy) || !dlsym(library, kSetStream)) {
      dlclose(library);
      library = nullptr;
      return false;
    }
    Dl_info info{};
    path = dladdr(gemm, &info) && info.dli_fname ? info.dli_fname : file;
    return true;
  }
  // Tries the sonames through the loader's search, then the usual directories, then the site-packages
  // of the python3 on PATH and of an active virtual or conda environment.
  bool load() {
    if (const char* forced = std::getenv("HIPSTACK_BLAS_LIBRARY")) return open(forced);
    std::vector<std::string> dirs;
    if (const char* env = std::getenv(kEnvDir)) {
      dirs.push_back(std::string(env) + "/lib64");
      dirs.push_back(std::string(env) + "/lib");
    }
    for (const char* d : kLibraryDirs) dirs.push_back(d);
    std::vector<std::string> prefixes;
    for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
      if (const char* p = std::getenv(var)) prefixes.push_back(p);
    if (const char* path_env = std::getenv("PATH")) {
      std::string_view rest = path_env;
      while (!rest.empty()) {
        const size_t colon = rest.find(':');
        const std::string dir(rest.substr(0, colon));
        rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
        if (!dir.empty() && access((dir + "/python3").c_str(), X_OK) == 0) prefixes.push_back(dir + "/..");
      }
    }
    for (const std::string& prefix : prefixes)
      for (const char* wheel : kWheelDirs) {
        glob_t g{};
        if (glob((prefix + "/lib/python3*/site-packages/" + wheel).c_str(), 0, nullptr, &g) == 0)
          for (size_t i = 0; i < g.gl_pathc; ++i) dirs.push_back(g.gl_pathv[i]);
        globfree(&g);
      }
    for (const char* soname : kSonames)
      if (open(soname)) return true;
    for (const std::string& dir : dirs)
      for (const char* soname : kSonames)
        if (access((dir + "/" + soname).c_str(), R_OK) == 0 && open(dir + "/" + soname)) return true;
    return false;
  }
  // A handle on the stream; on NVIDIA a 32 MiB workspace as torch gives cuBLAS on Hopper.
  void start(hipStream_t stream) {
    int status = reinterpret_cast<CreateFn>(dlsym(library, kCreate))(&handle);
    if (status != 0) fail("create a handle", status);
    status = reinterpret_cast<SetStreamFn>(dlsym(library, kSetStream))(handle, stream);
    if (status != 0) fail("set the stream", status);
#ifdef HIPSTACK_HIP_NVIDIA
    if (auto set_workspace = reinterpret_cast<SetWorkspaceFn>(dlsym(library, "cublasSetWorkspace_v2"))) {
      const size_t bytes = size_t{32} << 20;
      HIP_CHECK(hipMalloc(&workspace, bytes));
      status = set_workspace(handle, workspace, bytes);
      if (status != 0) fail("set the workspace", status);
    }
#endif
  }
  void stop() {
    if (handle) reinterpret_cast<DestroyFn>(dlsym(library, kDestroy))(handle);
    if (workspace) HIP_CHECK(hipFree(workspace));
    handle = workspace = nullptr;
  }
  [[noreturn]] void fail(const char* what, int status) const {
    std::fprintf(stderr, "error: %s (%s) could not %s: status %d\n", kBlasName, path.c_str(), what, status);
    std::exit(1);
  }
  // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: the call torch makes for contiguous tensors (B first,
  // no transposes, leading dimensions n, k, n).
  void run(Precision p, const void* a, const void* b, void* c, int size) const {
    const float alpha32 = 1.0f, beta32 = 0.0f;
    const double alpha64 = 1.0, beta64 = 0.0;
    const bool f64 = p == Precision::fp64;
    const int type = p == Precision::fp32 ? kTypeF32 : p == Precision::bf16 ? kTypeBF16 : kTypeF64;
    const void* alpha = f64 ? static_cast<const void*>(&alpha64) : &alpha32;
    const void* beta = f64 ? static_cast<const void*>(&beta64) : &beta32;
    const int compute = f64 ? kComputeF64 : kComputeF32;
#ifdef HIPSTACK_HIP_NVIDIA
    const int status = reinterpret_cast<GemmExFn>(gemm)(handle, kOpN, kOpN, size, size, size, alpha, b, type, size, a,
                                                        type, size, beta, c, type, size, compute, kAlgoDefault);
#else
    const int status = reinterpret_cast<RocGemmExFn>(gemm)(handle, kOpN, kOpN, size, size, size, alpha, b, type, size, a,
                                                           type, size, beta, c, type, size, c, type, size, compute,
                                                           kAlgoDefault, 0, 0);
#endif
    if (status != 0) fail(kGemm, status);
  }
};

// ---------------------------------------------------------------------------------------------------
// Inputs: k/16 for integers k in [-16, 16] from a hash of the position, exact in bf16, fp32 and fp64.
// Every product is a multiple of 1/256 and every partial sum is below K in magnitude, so for K up to
// 2^16 fp32 and fp64 accumulate them exactly; the reference (integer sums) is exact.
uint64_t mix(uint64_t index, uint64_t seed) {
  uint64_t x = index * 0x9e3779b97f4a7c15ull + seed;
  x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9ull;
  return x ^ (x >> 29);
}
int8_t input_value(uint64_t index, uint64_t seed) { return static_cast<int8_t>(static_cast<int>(mix(index, seed) % 33) - 16); }

struct Run {
  Precision precision;
  const char* backend;
  std::string library;
  double best_ms = 0, mean_ms = 0, max_error = 0, tolerance = 0;
  bool verified = false;
};

struct Args {
  smoke::Options o;
  std::vector<Precision> precisions;
  int size = 8192;
  std::string backend = "auto";
};

constexpr const char* kUsage =
    "gemm [--precision fp32,bf16,fp64] [--size N] [--repeats N] [--backend auto|blas|tiled] [--device N] "
    "[--plant-error] [--json]";

// JSON has no NaN: an unwritten (NaN) result reports its error as null.
std::string number_or_null(double v) {
  if (std::isnan(v)) return "null";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g", v);
  return buffer;
}

[[noreturn]] void bad(const std::string& what) {
  std::fprintf(stderr, "%s\nusage: %s\n", what.c_str(), kUsage);
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args args;
  std::vector<char*> common{argv[0]};  // what smoke::parse knows
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a != "--precision" && a != "--backend") {
      common.push_back(argv[i]);
      continue;
    }
    if (i + 1 >= argc) bad(std::string(a) + " needs a value");
    const std::string value = argv[++i];
    if (a == "--backend") {
      if (value != "auto" && value != "blas" && value != "tiled") bad("bad value for --backend: " + value);
      args.backend = value;
      continue;
    }
    args.precisions.clear();
    size_t start = 0;
    while (start <= value.size()) {
      const size_t comma = std::min(value.find(',', start), value.size());
      const std::string item = value.substr(start, comma - start);
      if (item == "fp32") args.precisions.push_back(Precision::fp32);
      else if (item == "bf16") args.precisions.push_back(Precision::bf16);
      else if (item == "fp64") args.precisions.push_back(Precision::fp64);
      else bad("bad precision in --precision: '" + item + "' (fp32, bf16 or fp64)");
      start = comma + 1;
    }
  }
  args.o = smoke::parse(static_cast<int>(common.size()), common.data(), kUsage, true);
  if (args.precisions.empty()) args.precisions = {Precision::fp32, Precision::bf16};
  if (args.o.size > 65536) bad("--size must be at most 65536 (the check's exact reference needs K <= 2^16)");
  if (args.o.size) args.size = static_cast<int>(args.o.size);
  if (!args.o.repeats) args.o.repeats = 20;
  return args;
}

// The inputs as small integers (the values times 16), kept on the host for the reference, and the
// positions the check samples: the four corners, the centre (where --plant-error strikes), and 251
// from a hash.
struct Inputs {
  explicit Inputs(int size) : ka(static_cast<size_t>(size) * size), kb(ka.size()) {
    for (size_t i = 0; i < ka.size(); ++i) {
      ka[i] = input_value(i, 1);
      kb[i] = input_value(i, 2);
    }
    samples = {{0, 0}, {0, size - 1}, {size - 1, 0}, {size - 1, size - 1}, {size / 2, size / 2}};
    for (uint64_t s = 0; samples.size() < 256; ++s)
      samples.push_back({static_cast<int>(mix(s, 3) % static_cast<uint64_t>(size)),
                         static_cast<int>(mix(s, 4) % static_cast<uint64_t>(size))});
  }
  std::vector<int8_t> ka, kb;
  std::vector<std::pair<int, int>> samples;
};

// A, B and C of one precision on the device: A and B uploaded from the inputs, C all-ones bytes (a
// NaN in every precision: an unwritten element shows).
class Matrices {
 public:
  Matrices(Precision p, const Inputs& inputs) : p_(p), esize_(element_bytes(p)), bytes_(inputs.ka.size() * esize_) {
    HIP_CHECK(hipMalloc(&a, bytes_));
    HIP_CHECK(hipMalloc(&b, bytes_));
    HIP_CHECK(hipMalloc(&c, bytes_));
    std::vector<unsigned char> host(bytes_);
    for (int which = 0; which < 2; ++which) {
      const std::vector<int8_t>& src = which ? inputs.kb : inputs.ka;
      for (size_t i = 0; i < src.size(); ++i) {
        const double v = src[i] / 16.0;
        if (p == Precision::fp32) reinterpret_cast<float*>(host.data())[i] = static_cast<float>(v);
        else if (p == Precision::bf16) reinterpret_cast<uint16_t*>(host.data())[i] = float_to_bf16(static_cast<float>(v));
        else reinterpret_cast<double*>(host.data())[i] = v;
      }
      HIP_CHECK(hipMemcpy(which ? b : a, host.data(), bytes_, hipMemcpyHostToDevice));
    }
    HIP_CHECK(hipMemset(c, 0xff, bytes_));
  }
  ~Matrices() {
    HIP_CHECK(hipFree(a));
    HIP_CHECK(hipFree(b));
    HIP_CHECK(hipFree(c));
  }
  Matrices(const Matrices&) = delete;
  Matrices& operator=(const Matrices&) = delete;

  // C's element `index`, as a double.
  double read(size_t index) const {
    unsigned char raw[8];
    HIP_CHECK(hipMemcpy(raw, static_cast<unsigned char*>(c) + index * esize_, esize_, hipMemcpyDeviceToHost));
    if (p_ == Precision::fp32) return static_cast<double>(*reinterpret_cast<float*>(raw));
    if (p_ == Precision::bf16) return static_cast<double>(bf16_to_float(*reinterpret_cast<uint16_t*>(raw)));
    return *reinterpret_cast<double*>(raw);
  }
  void write(size_t index, double value) {
    unsigned char raw[8];
    if (p_ == Precision::fp32) *reinterpret_cast<float*>(raw) = static_cast<float>(value);
    else if (p_ == Precision::bf16) *reinterpret_cast<uint16_t*>(raw) = float_to_bf16(static_cast<float>(value));
    else *reinterpret_cast<double*>(raw) = value;
    HIP_CHECK(hipMemcpy(static_cast<unsigned char*>(c) + index * esize_, raw, esize_, hipMemcpyHostToDevice));
  }

  void *a = nullptr, *b = nullptr, *c = nullptr;

 private:
  Precision p_;
  size_t esize_, bytes_;
};

// The library, when the backend allows one and one loads; nothing but an error when --backend blas
// asked for one that does not load (exit 1, said on stderr).
std::optional<bool> choose_blas(const Args& args, Blas& blas) {
  if (args.backend == "tiled") return false;
  const bool loaded = blas.load();
  if (!loaded && args.backend == "blas") {
    std::fprintf(stderr, "error: --backend blas: no %s library could be loaded (tried %s; set "
                         "HIPSTACK_BLAS_LIBRARY=/path to name one)\n", kBlasName, blas.tried.c_str());
    return std::nullopt;
  }
  if (!loaded)
    std::fprintf(stderr, "note: no %s library could be loaded (tried %s); using the tiled kernel\n", kBlasName,
                 blas.tried.c_str());
  return loaded;
}

// The check. The error at each position is |C - exact| divided by sum_k |a_ik·b_kj| (the size of the
// terms, which bounds |C|; a plain relative error is undefined where the exact value is 0). The
// tolerance is the classical worst-case bound for a K-term sum in the accumulation's unit roundoff,
// K·u_acc, plus one rounding to the output's precision u_out: fp32 K·2^-24, bf16 K·2^-24 + 2^-8,
// fp64 K·2^-53. (With these inputs the sums are exact, so only bf16's output rounding shows.) A
// planted +1000 is at least 1000/K of the terms' size, far above it for any K <= 2^16.
void check(const Matrices& m, const Inputs& inputs, int size, Run& r) {
  const double u_acc = r.precision == Precision::fp64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  r.tolerance = size * u_acc + (r.precision == Precision::bf16 ? std::ldexp(1.0, -8) : 0.0);
  r.verified = true;
  for (const auto& [i, j] : inputs.samples) {
    int64_t exact = 0, terms = 0;  // in units of 1/256
    for (int k = 0; k < size; ++k) {
      const int product = inputs.ka[static_cast<size_t>(i) * size + k] * inputs.kb[static_cast<size_t>(k) * size + j];
      exact += product;
      terms += std::abs(product);
    }
    const double got = m.read(static_cast<size_t>(i) * size + j);
    const double error = std::fabs(got - exact / 256.0) / std::max(terms / 256.0, 1.0 / 256.0);
    if (!(error <= r.tolerance)) {  // NaN fails too
      if (r.verified)
        std::fprintf(stderr, "%s: C[%d][%d] = %.9g, expected %.9g\n", name_of(r.precision), i, j, got, exact / 256.0);
      r.verified = false;
    }
    if (!(error <= r.max_error)) r.max_error = error;  // keeps a NaN
  }
}

// One precision: three warm-up GEMMs, `repeats` timed ones, then the check (after a planted error
// when asked).
Run run_precision(Precision p, const Inputs& inputs, int size, const smoke::Options& o, const Blas* blas,
                  hipStream_t stream) {
  Run r{p, blas != nullptr ? kBlasName : "tiled", blas != nullptr ? blas->path : std::string()};
  Matrices m(p, inputs);
  const auto gemm = [&] {
    if (blas != nullptr) blas->run(p, m.a, m.b, m.c, size);
    else launch_tiled(p, m.a, m.b, m.c, size, stream);
    HIP_CHECK(hipGetLastError());
  };
  for (int w = 0; w < 3; ++w) gemm();  // warm-up: library initialisation, clocks
  HIP_CHECK(hipStreamSynchronize(stream));
  hipEvent_t start, stop;
  HIP_CHECK(hipEventCreate(&start));
  HIP_CHECK(hipEventCreate(&stop));
  std::vector<float> ms;
  for (int k = 0; k < o.repeats; ++k) {
    HIP_CHECK(hipEventRecord(start, stream));
    gemm();
    HIP_CHECK(hipEventRecord(stop, stream));
    HIP_CHECK(hipEventSynchronize(stop));
    float t = 0;
    HIP_CHECK(hipEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  HIP_CHECK(hipEventDestroy(start));
  HIP_CHECK(hipEventDestroy(stop));
  r.best_ms = *std::min_element(ms.begin(), ms.end());
  for (float t : ms) r.mean_ms += t / static_cast<double>(ms.size());
  if (o.plant_error) {  // after the GEMM, a wrong value at the centre, which the check must catch
    const size_t index = static_cast<size_t>(size / 2) * size + size / 2;
    m.write(index, m.read(index) + 1000.0);
  }
  check(m, inputs, size, r);
  return r;
}

void print_runs(const hipDeviceProp_t& prop, const smoke::Options& o, int size, const Blas* blas,
                const std::vector<Run>& runs, bool ok) {
  const double flop = 2.0 * size * static_cast<double>(size) * size;
  if (o.json) {
    std::printf("{\"test\": \"gemm\", \"device\": %s, \"size\": %d, \"repeats\": %d, \"runs\": [",
                smoke::device_json(prop, o.device).c_str(), size, o.repeats);
    for (const Run& r : runs)
      std::printf("%s{\"precision\": \"%s\", \"backend\": \"%s\", \"library\": \"%s\", \"m\": %d, \"n\": %d, \"k\": %d, "
                  "\"best_ms\": %.4f, \"mean_ms\": %.4f, \"tflops\": %.2f, \"mean_tflops\": %.2f, "
                  "\"max_relative_error\": %s, \"verified\": %s}",
                  &r == runs.data() ? "" : ", ", name_of(r.precision), r.backend, r.library.c_str(), size, size, size,
                  r.best_ms, r.mean_ms, flop / (r.best_ms * 1e-3) / 1e12, flop / (r.mean_ms * 1e-3) / 1e12,
                  number_or_null(r.max_error).c_str(), r.verified ? "true" : "false");
    std::printf("], \"result\": \"%s\"}\n", ok ? "pass" : "fail");
    return;
  }
  std::printf("gemm on %s (%s): M = N = K = %d, best and mean of %d after a warm-up\n", prop.name, prop.gcnArchName,
              size, o.repeats);
  if (blas != nullptr) std::printf("library: %s\n", blas->path.c_str());
  std::printf("%-9s %-8s %10s %10s %9s %12s %11s %10s %s\n", "precision", "backend", "best ms", "mean ms", "TFLOPS",
              "mean TFLOPS", "max error", "tolerance", "check");
  for (const Run& r : runs)
    std::printf("%-9s %-8s %10.4f %10.4f %9.2f %12.2f %11.3g %10.3g %s\n", name_of(r.precision), r.backend, r.best_ms,
                r.mean_ms, flop / (r.best_ms * 1e-3) / 1e12, flop / (r.mean_ms * 1e-3) / 1e12, r.max_error,
                r.tolerance, r.verified ? "PASS" : "FAIL");
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  const smoke::Options& o = args.o;
  const hipDeviceProp_t prop = smoke::open_device(o);
  const int size = args.size;
  Blas blas;
  const std::optional<bool> use_blas = choose_blas(args, blas);
  if (!use_blas) return 1;
  hipStream_t stream;
  HIP_CHECK(hipStreamCreate(&stream));
  if (*use_blas) blas.start(stream);
  const Inputs inputs(size);
  std::vector<Run> runs;
  for (const Precision p : args.precisions) runs.push_back(run_precision(p, inputs, size, o, *use_blas ? &blas : nullptr, stream));
  if (*use_blas) blas.stop();
  HIP_CHECK(hipStreamDestroy(stream));
  bool ok = true;
  for (const Run& r : runs) ok = ok && r.verified;
  print_runs(prop, o, size, *use_blas ? &blas : nullptr, runs, ok);
  return ok ? 0 : 1;
}
