// The floor under hipstack's amdgpu sampling: the same sysfs reads, made by a bare loop with nothing
// around them (issue 44, docs/performance.md "The daemon against the sysfs floor").
//   sysfs_floor LIST SECONDS
// LIST holds lines "RATE KIND PATH": RATE times a second, a file (KIND f) is read (open, read up to
// 64 KiB, close), a folder (KIND d) listed (opendir, readdir to the end, closedir).
// bench/amd_daemon.sh writes it from what hipstack-smid opened while it was traced. Prints the
// process's CPU share of one core over SECONDS.
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

struct File {
  double rate = 0;    // reads a second
  double owed = 0;    // reads due and not made yet
  bool folder = false;
  std::string path;
};

double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

bool list_once(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return false;
  while (::readdir(dir) != nullptr) {
  }
  ::closedir(dir);
  return true;
}

bool read_once(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  static std::array<char, 65536> buffer;
  const ssize_t n = ::read(fd, buffer.data(), buffer.size());
  ::close(fd);
  return n >= 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: sysfs_floor LIST SECONDS\n");
    return 2;
  }
  std::vector<File> files;
  std::ifstream list(argv[1]);
  for (std::string line; std::getline(list, line);) {
    std::istringstream fields(line);
    File f;
    std::string kind;
    if (fields >> f.rate >> kind >> f.path && f.rate > 0 && (kind == "f" || kind == "d")) {
      f.folder = kind == "d";
      files.push_back(f);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "sysfs_floor: no \"RATE KIND PATH\" line in %s\n", argv[1]);
    return 2;
  }
  const double seconds = std::atof(argv[2]);
  // Ten rounds a second: a file read once a second is read in one of them, as a sampler's pass would.
  constexpr int kRounds = 10;
  const auto step = std::chrono::milliseconds(1000 / kRounds);
  const double cpu_start = cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  auto next = start;
  std::size_t reads = 0, failed = 0;
  while (std::chrono::steady_clock::now() - start < std::chrono::duration<double>(seconds)) {
    for (File& f : files) {
      f.owed += f.rate / kRounds;
      for (; f.owed >= 1; f.owed -= 1) {
        ++reads;
        if (!(f.folder ? list_once(f.path) : read_once(f.path))) ++failed;
      }
    }
    next += step;
    std::this_thread::sleep_until(next);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("sysfs_floor: %zu files, %zu reads (%zu failed) in %.0f s: %.3f%% of a core\n", files.size(), reads, failed, wall,
              100.0 * (cpu_seconds() - cpu_start) / wall);
  return failed == 0 ? 0 : 1;
}
