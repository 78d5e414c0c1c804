// process.cpp: fork/exec with two pipes and a poll loop. The child leads its own process group so a
// module's helpers die with it on timeout.
#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#if __has_include(<linux/close_range.h>)
#include <linux/close_range.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>

#include "stop_signals.hpp"

namespace hipstack::validate {
namespace {

constexpr std::size_t kOutCap = 4u << 20;    // a module's JSON is a few KiB; more is a broken module
constexpr std::size_t kErrTail = 8u << 10;
constexpr int kTickMs = 250;

// An owned file descriptor, closed when it goes out of scope: no early return can leak one.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  [[nodiscard]] int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read, write;
};

// Close-on-exec on both ends: the child dup2()s the ends it needs onto 0-2, the rest vanish at exec.
bool open_pipe(Pipe& pipe, std::string& error) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  pipe.read = Fd(fds[0]);
  pipe.write = Fd(fds[1]);
  return true;
}

// In the child: every descriptor from 3 up closes at exec. hipstack-validate's own (inherited from
// its parent, or opened by a vendor library without O_CLOEXEC) are none of a module's business.
void close_on_exec_from(int first, long open_max) {
#if defined(SYS_close_range) && defined(CLOSE_RANGE_CLOEXEC)
  if (::syscall(SYS_close_range, static_cast<unsigned>(first), ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
#endif
  for (int fd = first; fd < open_max; ++fd) {  // kernels before 5.11
    const int flags = ::fcntl(fd, F_GETFD);
    if (flags >= 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
}

enum class Drain { data, empty, closed };

// The kept tail starts at a character, not inside one: a UTF-8 continuation byte (10xxxxxx) at the
// cut is dropped with the rest, so a module's multibyte text is not turned into a broken byte.
void keep_tail_of(std::string& text, std::size_t cap) {
  std::size_t cut = text.size() - cap;
  for (int i = 0; i < 3 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80; ++i) ++cut;
  text.erase(0, cut);
}

// Reads what is there without blocking (the pipes are non-blocking).
Drain drain(int fd, std::string& into, std::size_t cap, bool keep_tail, bool& truncated) {
  char buffer[65536];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  if (n == 0) return Drain::closed;
  if (n < 0) return errno == EINTR || errno == EAGAIN ? Drain::empty : Drain::closed;
  into.append(buffer, static_cast<std::size_t>(n));
  if (into.size() > cap) {
    if (keep_tail) keep_tail_of(into, cap);
    else into.resize(cap);
    truncated = true;
  }
  return Drain::data;
}

}  // namespace

namespace {

// What the child execs, all made before fork: after it, the child may only make async-signal-safe calls.
struct ChildImage {
  std::vector<char*> argv, envp;
  long open_max = 256;
};

ChildImage child_image(const std::string& program, const std::vector<std::string>& args, const ProcessOptions& options) {
  ChildImage image;
  image.argv.push_back(const_cast<char*>(program.c_str()));
  for (const std::string& a : args) image.argv.push_back(const_cast<char*>(a.c_str()));
  image.argv.push_back(nullptr);
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view name(*entry, std::strcspn(*entry, "="));
    const bool replaced = std::any_of(options.environment.begin(), options.environment.end(), [&](const std::string& e) {
      return e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=';
    });
    if (!replaced) image.envp.push_back(*entry);
  }
  for (const std::string& e : options.environment) image.envp.push_back(const_cast<char*>(e.c_str()));
  image.envp.push_back(nullptr);
  image.open_max = std::clamp(::sysconf(_SC_OPEN_MAX), 256L, 65536L);
  return image;
}

// The child, after fork: a process group of its own, the pipes as stdout and stderr, /dev/null as
// stdin, nothing else open, then exec; exec's errno goes to the parent on `exec_report`.
[[noreturn]] void become_child(const std::string& program, const ChildImage& image, const Pipe& out, const Pipe& err,
                               const Pipe& exec_report, pid_t parent) {
  ::setpgid(0, 0);
  // A backstop for a hipstack-validate killed outright (SIGKILL, a crash): the module goes too. If
  // the parent died before this line, the death signal will never come: leave now.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  ::dup2(out.write.get(), STDOUT_FILENO);
  ::dup2(err.write.get(), STDERR_FILENO);
  // O_CLOEXEC: the copy on fd 0 stays open across exec (dup2 clears the flag), the original does not.
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull >= 0 && devnull != STDIN_FILENO) ::dup2(devnull, STDIN_FILENO);
  close_on_exec_from(3, image.open_max);
  ::execve(program.c_str(), image.argv.data(), image.envp.data());
  const int e = errno;  // tell the parent why exec failed, through the close-on-exec pipe
  (void)!::write(exec_report.write.get(), &e, sizeof e);
  ::_exit(127);
}

// Until the child `pid` exits: reads its output into `r`, stops it on a stop signal or past the
// timeout (SIGTERM to its group, SIGKILL 5 s later), calls options.tick. The wait status, or
// nothing when waitpid lost it.
std::optional<int> supervise(pid_t pid, const Pipe& out, const Pipe& err, const ProcessOptions& options,
                             std::chrono::steady_clock::time_point start, ProcessResult& r) {
  StopSignals* const stop = options.stop;
  ::fcntl(out.read.get(), F_SETFL, O_NONBLOCK);
  ::fcntl(err.read.get(), F_SETFL, O_NONBLOCK);
  bool out_open = true, err_open = true, err_truncated = false;
  const auto read_both = [&] {
    if (out_open) out_open = drain(out.read.get(), r.out, kOutCap, false, r.output_truncated) != Drain::closed;
    if (err_open) err_open = drain(err.read.get(), r.err_tail, kErrTail, true, err_truncated) != Drain::closed;
  };
  bool term_sent = false;
  std::chrono::steady_clock::time_point term_time;
  while (true) {
    // Never block on the child: it may close its output and hang, or exit and leave a grandchild
    // holding the pipes.
    pollfd fds[3] = {{out_open ? out.read.get() : -1, POLLIN, 0},
                     {err_open ? err.read.get() : -1, POLLIN, 0},
                     {stop && !term_sent ? stop->fd() : -1, POLLIN, 0}};  // read below, until acted on
    ::poll(fds, 3, kTickMs);
    read_both();
    int status = 0;
    const pid_t waited = ::waitpid(pid, &status, WNOHANG);
    // -1 other than EINTR (ECHILD when SIGCHLD is ignored and the kernel reaped the child itself):
    // the child is gone and its status with it. Waiting on would loop for ever.
    if (waited == pid || (waited < 0 && errno != EINTR)) {
      if (waited < 0) r.wait_error = std::string("waitpid: ") + std::strerror(errno);
      for (int i = 0; i < 64 && (out_open || err_open); ++i) read_both();  // what it wrote last
      ::kill(-pid, SIGKILL);  // nothing of the module outlives it
      return waited == pid ? std::optional<int>(status) : std::nullopt;
    }
    const auto now = std::chrono::steady_clock::now();
    if (!term_sent && stop && stop->received() != 0) {
      r.stopped_by = stop->received();
      ::kill(-pid, SIGTERM);
      term_sent = true;
      term_time = now;
    } else if (!term_sent && now - start > options.timeout) {
      r.timed_out = true;
      ::kill(-pid, SIGTERM);
      term_sent = true;
      term_time = now;
    } else if (term_sent && now - term_time > std::chrono::seconds(5)) {
      ::kill(-pid, SIGKILL);
    }
    if (options.tick) options.tick();
  }
}

}  // namespace

ProcessResult run_process(const std::string& program, const std::vector<std::string>& args,
                          const ProcessOptions& options) {
  ProcessResult r;
  Pipe out, err, exec_report;
  if (!open_pipe(out, r.spawn_error) || !open_pipe(err, r.spawn_error) || !open_pipe(exec_report, r.spawn_error))
    return r;
  const ChildImage image = child_image(program, args, options);
  const pid_t parent = ::getpid();
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    r.spawn_error = std::string("fork: ") + std::strerror(errno);
    return r;
  }
  if (pid == 0) become_child(program, image, out, err, exec_report, parent);
  ::setpgid(pid, pid);  // also here, so the group exists before any kill below
  out.write.reset();
  err.write.reset();
  exec_report.write.reset();
  int exec_errno = 0;
  if (::read(exec_report.read.get(), &exec_errno, sizeof exec_errno) == sizeof exec_errno)
    r.spawn_error = program + ": " + std::strerror(exec_errno);
  exec_report.read.reset();
  const std::optional<int> status = supervise(pid, out, err, options, start, r);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (status && WIFEXITED(*status)) r.exit_code = WEXITSTATUS(*status);
  if (status && WIFSIGNALED(*status)) r.signal = WTERMSIG(*status);
  return r;
}

std::string signal_name(int signal) {
  const char* name = ::sigabbrev_np(signal);
  return name ? std::string("SIG") + name : "signal " + std::to_string(signal);
}

std::string describe_end(const ProcessResult& r, std::chrono::seconds timeout) {
  if (!r.spawn_error.empty()) return "could not start: " + r.spawn_error;
  if (r.stopped_by != 0) return "stopped: hipstack-validate received " + signal_name(r.stopped_by) + " (the module was ended)";
  if (r.timed_out) return "timed out after " + std::to_string(timeout.count()) + " s (killed)";
  if (!r.wait_error.empty()) return "ended with an unknown exit status (" + r.wait_error + ")";
  if (r.signal != 0) return "killed by " + signal_name(r.signal);
  return "exit code " + std::to_string(r.exit_code);
}

}  // namespace hipstack::validate
