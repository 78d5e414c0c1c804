// process.cpp: fork/exec with two pipes and a poll loop. The child leads its own process group so a
// module's helpers die with it on timeout.
#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hipstack::validate {
namespace {

constexpr std::size_t kOutCap = 4u << 20;    // a module's JSON is a few KiB; more is a broken module
constexpr std::size_t kErrTail = 8u << 10;
constexpr int kTickMs = 250;

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

ProcessResult run_process(const std::string& program, const std::vector<std::string>& args,
                          std::chrono::seconds timeout, const std::function<void()>& tick) {
  ProcessResult r;
  int out_pipe[2], err_pipe[2], exec_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 || ::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    r.spawn_error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    r.spawn_error = std::string("fork: ") + std::strerror(errno);
    return r;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    ::execv(program.c_str(), argv.data());
    const int e = errno;  // tell the parent why exec failed, through the close-on-exec pipe
    (void)!::write(exec_pipe[1], &e, sizeof e);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before any kill below
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(exec_pipe[1]);
  int exec_errno = 0;
  if (::read(exec_pipe[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno)
    r.spawn_error = program + ": " + std::strerror(exec_errno);
  ::close(exec_pipe[0]);

  ::fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
  ::fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);
  bool out_open = true, err_open = true, err_truncated = false;
  const auto read_both = [&] {
    if (out_open) out_open = drain(out_pipe[0], r.out, kOutCap, false, r.output_truncated) != Drain::closed;
    if (err_open) err_open = drain(err_pipe[0], r.err_tail, kErrTail, true, err_truncated) != Drain::closed;
  };
  bool term_sent = false;
  std::chrono::steady_clock::time_point term_time;
  int status = 0;
  while (true) {
    // Never block on the child: it may close its output and hang, or exit and leave a grandchild
    // holding the pipes.
    pollfd fds[2] = {{out_open ? out_pipe[0] : -1, POLLIN, 0}, {err_open ? err_pipe[0] : -1, POLLIN, 0}};
    ::poll(fds, 2, kTickMs);
    read_both();
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      for (int i = 0; i < 64 && (out_open || err_open); ++i) read_both();  // what it wrote last
      ::kill(-pid, SIGKILL);  // nothing of the module outlives it
      break;
    }
    const auto now = std::chrono::steady_clock::now();
    if (!term_sent && now - start > timeout) {
      r.timed_out = true;
      ::kill(-pid, SIGTERM);
      term_sent = true;
      term_time = now;
    } else if (term_sent && now - term_time > std::chrono::seconds(5)) {
      ::kill(-pid, SIGKILL);
    }
    if (tick) tick();
  }
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

std::string describe_end(const ProcessResult& r, std::chrono::seconds timeout) {
  if (!r.spawn_error.empty()) return "could not start: " + r.spawn_error;
  if (r.timed_out) return "timed out after " + std::to_string(timeout.count()) + " s (killed)";
  if (r.signal != 0) {
    const char* name = ::sigabbrev_np(r.signal);
    return name ? std::string("killed by SIG") + name : "killed by signal " + std::to_string(r.signal);
  }
  return "exit code " + std::to_string(r.exit_code);
}

}  // namespace hipstack::validate
