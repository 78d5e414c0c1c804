// memtest: a GPU memory test over a share of the device's free memory, in the manner of memtest86.
// The memory is taken in chunks of up to 1 GiB (so a fragmented heap still yields most of it) and
// seen as one array of 32-bit words. Patterns:
//   walking-ones    for each bit b of 32: write 1<<b to every word, then verify every word
//   walking-zeros   the same with ~(1<<b)
//   moving-inversions  for p in 0x00000000, 0xffffffff, 0x55555555, 0xaaaaaaaa: write p; an ascending
//                   sweep checks p and writes ~p in each word; a descending sweep checks ~p and writes p
//   random          each word = a hash of its index and a per-pass seed, written then verified (the
//                   device recomputes the hash, so no host copy of the data is needed)
// Every pattern writes all the memory before it reads any back, so a write that lands on the wrong
// address is seen. Mismatches are counted on the device; the first 16 are kept (offset, expected,
// actual). --plant-error flips one bit of one word between the first pattern's write and its check:
// the test must report exactly that error and exit 1.
// Usage: memtest [--fraction F] [--bytes N] [--passes N] [--patterns LIST] [--plant-error] [--device N] [--json]
#include "common.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

constexpr int kKeptErrors = 16;
constexpr size_t kChunkBytes = size_t{1} << 30;
constexpr size_t kSmallestChunk = size_t{16} << 20;  // below this a failed allocation ends the search
constexpr unsigned kBlock = 256;

struct ErrorLog {
  unsigned long long count;
  unsigned long long offset[kKeptErrors];  // bytes from the start of the tested memory
  uint32_t expected[kKeptErrors];
  uint32_t actual[kKeptErrors];
};

__device__ void record(ErrorLog* log, unsigned long long word, uint32_t expected, uint32_t actual) {
  const unsigned long long k = atomicAdd(&log->count, 1ULL);
  if (k < kKeptErrors) {
    log->offset[k] = word * sizeof(uint32_t);
    log->expected[k] = expected;
    log->actual[k] = actual;
  }
}

// splitmix64's finaliser over the word's index and the seed: a cheap hash whose output bits all
// depend on every input bit, so neighbouring words differ in about half their bits.
__host__ __device__ inline uint32_t random_word(unsigned long long index, unsigned long long seed) {
  unsigned long long z = index * 0x9e3779b97f4a7c15ULL + seed;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<uint32_t>(z ^ (z >> 31));
}

__device__ inline void compare(ErrorLog* log, unsigned long long word, uint32_t expected, uint32_t actual) {
  if (actual != expected) record(log, word, expected, actual);
}
__device__ inline void compare(ErrorLog* log, unsigned long long word, uint4 expected, uint4 actual) {
  compare(log, word, expected.x, actual.x);
  compare(log, word + 1, expected.y, actual.y);
  compare(log, word + 2, expected.z, actual.z);
  compare(log, word + 3, expected.w, actual.w);
}
__device__ inline uint4 splat(uint32_t v) { return make_uint4(v, v, v, v); }
__device__ inline uint4 random_words(unsigned long long word, unsigned long long seed) {
  return make_uint4(random_word(word, seed), random_word(word + 1, seed), random_word(word + 2, seed),
                    random_word(word + 3, seed));
}

// A chunk is `n` vectors of four words (16-byte accesses keep more bytes in flight than 4-byte ones)
// whose first word has index `base` in the tested memory. The kernels stride over it with the grid.
#define EACH_VECTOR(i) \
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; \
       i += static_cast<size_t>(gridDim.x) * blockDim.x)

__global__ void fill(uint4* p, size_t n, uint32_t value) {
  EACH_VECTOR(i) p[i] = splat(value);
}

__global__ void check(const uint4* p, size_t n, unsigned long long base, uint32_t expected, ErrorLog* log) {
  EACH_VECTOR(i) compare(log, base + 4 * i, splat(expected), p[i]);
}

// Moving inversions: check each word holds `expected`, then write its complement. Ascending, the grid
// sweeps the chunk from its first vector up; descending, from its last vector down.
__global__ void check_and_invert(uint4* p, size_t n, unsigned long long base, uint32_t expected, bool descending,
                                 ErrorLog* log) {
  EACH_VECTOR(k) {
    const size_t i = descending ? n - 1 - k : k;
    compare(log, base + 4 * i, splat(expected), p[i]);
    p[i] = splat(~expected);
  }
}

__global__ void fill_random(uint4* p, size_t n, unsigned long long base, unsigned long long seed) {
  EACH_VECTOR(i) p[i] = random_words(base + 4 * i, seed);
}

__global__ void check_random(const uint4* p, size_t n, unsigned long long base, unsigned long long seed,
                             ErrorLog* log) {
  EACH_VECTOR(i) compare(log, base + 4 * i, random_words(base + 4 * i, seed), p[i]);
}
#undef EACH_VECTOR

__global__ void flip_bit(uint32_t* word, uint32_t mask) { *word ^= mask; }

struct Chunk {
  uint32_t* p;
  size_t words;  // a multiple of 4
  uint4* vectors() const { return reinterpret_cast<uint4*>(p); }
  unsigned long long base;  // index of its first word in the tested memory
};

// Allocates up to `bytes` in chunks of at most 1 GiB; a chunk that does not fit is retried at half the
// size, down to 16 MiB. Returns what it got (possibly less than asked).
std::vector<Chunk> allocate(size_t bytes) {
  std::vector<Chunk> chunks;
  size_t want = kChunkBytes, got = 0;
  while (got < bytes) {
    const size_t size = std::min(want, bytes - got) / sizeof(uint4) * sizeof(uint4);
    if (size == 0) break;
    void* p = nullptr;
    const hipError_t e = hipMalloc(&p, size);
    if (e == hipErrorOutOfMemory) {
      (void)hipGetLastError();  // clear it: running out is expected here, not a failure
      if (size <= kSmallestChunk) break;
      want = size / 2;
      continue;
    }
    HIP_CHECK(e);
    chunks.push_back({static_cast<uint32_t*>(p), size / sizeof(uint32_t), got / sizeof(uint32_t)});
    got += size;
  }
  return chunks;
}

struct Pattern {
  const char* name;
  bool chosen = false;
  unsigned long long errors = 0;
  double seconds = 0;
  double bytes_moved = 0;  // read plus written
};

class Tester {
 public:
  Tester(std::vector<Chunk> chunks, unsigned grid, ErrorLog* log, bool plant)
      : chunks_(std::move(chunks)), grid_(grid), log_(log), plant_(plant) {
    for (const Chunk& c : chunks_) words_ += c.words;
  }
  size_t bytes() const { return words_ * sizeof(uint32_t); }
  bool planted() const { return planted_; }
  unsigned long long planted_word() const { return planted_word_; }
  uint32_t planted_mask() const { return kPlantedMask; }

  // Runs one pass of the named pattern; returns the bytes read plus written.
  double run(std::string_view name, int pass) {
    double moved = 0;
    if (name == "walking-ones" || name == "walking-zeros") {
      const bool zeros = name == "walking-zeros";
      for (int b = 0; b < 32; ++b) {
        const uint32_t v = zeros ? ~(1u << b) : 1u << b;
        for (const Chunk& c : chunks_) launch(fill, c.vectors(), c.words / 4, v);
        plant();
        for (const Chunk& c : chunks_) launch(check, c.vectors(), c.words / 4, c.base, v, log_);
        moved += 2.0 * bytes();
      }
    } else if (name == "moving-inversions") {
      for (const uint32_t v : {0x00000000u, 0xffffffffu, 0x55555555u, 0xaaaaaaaau}) {
        for (const Chunk& c : chunks_) launch(fill, c.vectors(), c.words / 4, v);
        plant();
        for (const Chunk& c : chunks_) launch(check_and_invert, c.vectors(), c.words / 4, c.base, v, false, log_);
        for (auto c = chunks_.rbegin(); c != chunks_.rend(); ++c)
          launch(check_and_invert, c->vectors(), c->words / 4, c->base, ~v, true, log_);
        moved += 5.0 * bytes();  // write; read and write; read and write
      }
    } else {  // random
      const unsigned long long seed = 0x5eed0000ULL + static_cast<unsigned long long>(pass);
      for (const Chunk& c : chunks_) launch(fill_random, c.vectors(), c.words / 4, c.base, seed);
      plant();
      for (const Chunk& c : chunks_) launch(check_random, c.vectors(), c.words / 4, c.base, seed, log_);
      moved += 2.0 * bytes();
    }
    return moved;
  }

 private:
  static constexpr uint32_t kPlantedMask = 1u << 7;

  template <class... Kernel, class... Args>
  void launch(void (*kernel)(Kernel...), Args... args) {
    hipLaunchKernelGGL(kernel, dim3(grid_), dim3(kBlock), 0, nullptr, args...);
    HIP_CHECK(hipGetLastError());
  }
  // The first time a pattern has written the memory (and only then), flip one bit of the word in the
  // middle of the tested memory, before the pattern reads it back.
  void plant() {
    if (!plant_ || planted_) return;
    planted_word_ = words_ / 2;
    for (const Chunk& c : chunks_)
      if (planted_word_ >= c.base && planted_word_ < c.base + c.words) {
        hipLaunchKernelGGL(flip_bit, dim3(1), dim3(1), 0, nullptr, c.p + (planted_word_ - c.base), kPlantedMask);
        HIP_CHECK(hipGetLastError());
      }
    planted_ = true;
  }

  std::vector<Chunk> chunks_;
  size_t words_ = 0;
  unsigned grid_;
  ErrorLog* log_;
  bool plant_, planted_ = false;
  unsigned long long planted_word_ = 0;
};

unsigned long long error_count(const ErrorLog* log) {
  unsigned long long count = 0;
  HIP_CHECK(hipMemcpy(&count, &log->count, sizeof count, hipMemcpyDeviceToHost));
  return count;
}

// Marks the patterns --patterns names (comma-separated, or "all"); false, said on stderr, for an
// unknown one.
bool choose_patterns(const std::string& list, Pattern (&patterns)[4], const char* usage) {
  for (size_t start = 0; start <= list.size();) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view name = std::string_view(list).substr(start, comma - start);
    bool known = name == "all";
    for (Pattern& p : patterns)
      if (name == "all" || name == p.name) {
        p.chosen = true;
        known = true;
      }
    if (!known) {
      std::fprintf(stderr, "unknown pattern '%.*s' in --patterns\nusage: %s\n", static_cast<int>(name.size()),
                   name.data(), usage);
      return false;
    }
    start = comma + 1;
  }
  return true;
}

// Each chosen pattern `passes` times, timed, with the errors each found.
void run_patterns(Tester& tester, const ErrorLog* log, Pattern (&patterns)[4], int passes) {
  hipEvent_t start, stop;
  HIP_CHECK(hipEventCreate(&start));
  HIP_CHECK(hipEventCreate(&stop));
  for (int pass = 0; pass < passes; ++pass)
    for (Pattern& p : patterns) {
      if (!p.chosen) continue;
      const unsigned long long before = error_count(log);
      HIP_CHECK(hipEventRecord(start, nullptr));
      p.bytes_moved += tester.run(p.name, pass);
      HIP_CHECK(hipEventRecord(stop, nullptr));
      HIP_CHECK(hipEventSynchronize(stop));
      float ms = 0;
      HIP_CHECK(hipEventElapsedTime(&ms, start, stop));
      p.seconds += ms * 1e-3;
      p.errors += error_count(log) - before;
    }
}

void print_json(const hipDeviceProp_t& prop, int device, const Tester& tester, int passes, const Pattern (&patterns)[4],
                const ErrorLog& found) {
  const int kept = static_cast<int>(std::min<unsigned long long>(found.count, kKeptErrors));
  std::printf("{\"test\": \"memtest\", \"device\": %s, \"bytes_tested\": %zu, \"passes\": %d, \"patterns\": [",
              smoke::device_json(prop, device).c_str(), tester.bytes(), passes);
  bool first = true;
  for (const Pattern& p : patterns) {
    if (!p.chosen) continue;
    std::printf("%s{\"pattern\": \"%s\", \"errors\": %llu, \"seconds\": %.4f, \"gbps\": %.1f}", first ? "" : ", ",
                p.name, p.errors, p.seconds, p.bytes_moved / p.seconds / 1e9);
    first = false;
  }
  std::printf("], \"errors\": %llu, \"first_errors\": [", found.count);
  for (int k = 0; k < kept; ++k)
    std::printf("%s{\"offset\": %llu, \"expected\": \"0x%08x\", \"actual\": \"0x%08x\"}", k ? ", " : "",
                found.offset[k], found.expected[k], found.actual[k]);
  std::printf("], \"result\": \"%s\"}\n", found.count == 0 ? "pass" : "fail");
}

void print_text(const hipDeviceProp_t& prop, const Tester& tester, size_t chunks, size_t wanted, size_t free_bytes,
                int passes, const Pattern (&patterns)[4], const ErrorLog& found) {
  const int kept = static_cast<int>(std::min<unsigned long long>(found.count, kKeptErrors));
  std::printf("memtest on %s (%s): %.1f MiB tested in %zu chunk%s (%.1f MiB asked, %.1f MiB free), %d pass%s\n",
              prop.name, prop.gcnArchName, tester.bytes() / 1048576.0, chunks, chunks == 1 ? "" : "s",
              wanted / 1048576.0, free_bytes / 1048576.0, passes, passes == 1 ? "" : "es");
  if (tester.planted())
    std::printf("planted: bit mask 0x%08x flipped in the word at offset %llu\n", tester.planted_mask(),
                tester.planted_word() * sizeof(uint32_t));
  std::printf("%-18s %10s %10s %10s\n", "pattern", "errors", "seconds", "GB/s");
  for (const Pattern& p : patterns)
    if (p.chosen)
      std::printf("%-18s %10llu %10.3f %10.1f\n", p.name, p.errors, p.seconds, p.bytes_moved / p.seconds / 1e9);
  for (int k = 0; k < kept; ++k)
    std::printf("error at offset %llu: expected 0x%08x, read 0x%08x\n", found.offset[k], found.expected[k],
                found.actual[k]);
  std::printf("%llu error%s: %s\n", found.count, found.count == 1 ? "" : "s", found.count == 0 ? "PASS" : "FAIL");
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage =
      "memtest [--fraction F] [--bytes N] [--passes N] [--patterns LIST] [--plant-error] [--device N] [--json]\n"
      "  --fraction F   share of the free device memory to test, 0 < F <= 0.95 (default 0.10)\n"
      "  --bytes N      test N bytes instead (rounded down to 16; at most what can be allocated)\n"
      "  --patterns     comma-separated: walking-ones, walking-zeros, moving-inversions, random (default all)";
  const smoke::Options o =
      smoke::parse(argc, argv, usage, true, false, smoke::kMemtestOptions | smoke::kWithoutSizeRepeats);
  if (o.fraction > 0 && o.bytes > 0) {
    std::fprintf(stderr, "--fraction and --bytes exclude each other\nusage: %s\n", usage);
    return 2;
  }
  Pattern patterns[] = {{"walking-ones"}, {"walking-zeros"}, {"moving-inversions"}, {"random"}};
  if (!choose_patterns(o.patterns.empty() ? "all" : o.patterns, patterns, usage)) return 2;
  const int passes = o.passes ? o.passes : 1;

  const hipDeviceProp_t prop = smoke::open_device(o);
  size_t free_bytes = 0, total_bytes = 0;
  HIP_CHECK(hipMemGetInfo(&free_bytes, &total_bytes));
  const double fraction = o.fraction > 0 ? o.fraction : 0.10;
  const size_t wanted = o.bytes > 0 ? static_cast<size_t>(o.bytes) : static_cast<size_t>(fraction * free_bytes);
  ErrorLog* log = nullptr;
  HIP_CHECK(hipMalloc(&log, sizeof(ErrorLog)));
  HIP_CHECK(hipMemset(log, 0, sizeof(ErrorLog)));
  std::vector<Chunk> chunks = allocate(wanted);
  if (chunks.empty()) {
    std::fprintf(stderr, "error: could not allocate even %zu MiB of device memory (%zu MiB free)\n",
                 kSmallestChunk >> 20, free_bytes >> 20);
    return 1;
  }
  // Enough blocks to fill every compute unit several times over; each thread strides on from there.
  const unsigned grid = static_cast<unsigned>(prop.multiProcessorCount) * 8;
  Tester tester(chunks, grid, log, o.plant_error);

  run_patterns(tester, log, patterns, passes);
  ErrorLog found;
  HIP_CHECK(hipMemcpy(&found, log, sizeof found, hipMemcpyDeviceToHost));
  const bool ok = found.count == 0;
  if (o.json) print_json(prop, o.device, tester, passes, patterns, found);
  else print_text(prop, tester, chunks.size(), wanted, free_bytes, passes, patterns, found);
  for (const Chunk& c : chunks) HIP_CHECK(hipFree(c.p));
  HIP_CHECK(hipFree(log));
  return ok ? 0 : 1;
}
