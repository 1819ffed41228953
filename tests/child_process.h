// Running this test program again in a child process, for what one process cannot check twice: a setting read
// once per process (the backend), or a CUDA context lost on purpose. The child is this binary (/proc/self/exe)
// run with --gtest_filter naming its one test; it is started with fork + exec only, since a forked copy of a
// process that initialized CUDA cannot use CUDA.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

extern "C" char** environ;

namespace lazyfuse_test {

struct ChildResult {
  bool started = false;
  bool exited = false; ///< exited normally, with exit_code
  int exit_code = -1;
  int signal = 0; ///< the signal that ended it, when it did not exit normally
  bool timed_out = false;
  std::string output; ///< its stdout and stderr, interleaved

  bool ok() const { return started && exited && exit_code == 0 && !timed_out; }
  /// How it ended, then its output: for failure messages.
  std::string describe() const {
    std::string how = !started    ? "not started"
                      : timed_out ? "killed after its time limit"
                      : exited ? "exit status " + std::to_string(exit_code) + (exit_code == 127 ? " (exec failed)" : "")
                               : "killed by signal " + std::to_string(signal);
    return how + "; its output:\n" + output;
  }
};

/// The names of this process' environment variables that `select(name)` accepts: a `drop` list for start_self.
template <class Select> std::vector<std::string> variables_where(Select&& select) {
  std::vector<std::string> names;
  for (char** e = environ; *e; ++e) {
    const std::string_view kv = *e;
    std::string name(kv.substr(0, kv.find('=')));
    if (select(std::string_view(name))) names.push_back(std::move(name));
  }
  return names;
}

/// The LAZYFUSE_* settings in this process' environment (names in any case, as lazyfuse reads them), except the
/// tests' own LAZYFUSE_TEST_* and CI's LAZYFUSE_CI_*: what a child drops to see exactly the settings it is given.
inline std::vector<std::string> lazyfuse_settings() {
  return variables_where([](std::string_view name) {
    std::string up(name);
    for (auto& c : up) c = char(std::toupper(static_cast<unsigned char>(c)));
    return up.starts_with("LAZYFUSE_") && !name.starts_with("LAZYFUSE_TEST_") && !name.starts_with("LAZYFUSE_CI_");
  });
}

/// A child started by start_self, not waited for yet. Move-only; finish() it exactly once.
struct RunningChild {
  pid_t pid = -1;
  int output_fd = -1; ///< read end of the pipe carrying its stdout and stderr
  std::string error;  ///< why it did not start (pid < 0)
};

/// Starts this program with `--gtest_filter=<filter>`, in this process' environment without the GTEST_* variables
/// and without the variables named in `drop`, plus the "NAME=value" entries of `add` (which replace variables of
/// the same name). Returns at once: several children may run at the same time (finish() each; a child blocks when
/// it prints more than a pipe holds, about 64 KiB, before its turn to be read comes).
inline RunningChild start_self(const std::string& filter, const std::vector<std::string>& add,
                               const std::vector<std::string>& drop = {}) {
  RunningChild c;
  // Everything the child needs is built before fork(): after it, only dup2 and exec.
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) {
    const std::string_view kv = *e;
    bool keep = !kv.starts_with("GTEST_");
    for (const std::string& name : drop) keep = keep && !kv.starts_with(name + "=");
    for (const std::string& entry : add) keep = keep && !kv.starts_with(entry.substr(0, entry.find('=') + 1));
    if (keep) env_text.emplace_back(kv);
  }
  for (const std::string& entry : add) env_text.push_back(entry);
  std::vector<char*> envp;
  for (auto& kv : env_text) envp.push_back(kv.data());
  envp.push_back(nullptr);
  std::string exe = "/proc/self/exe", arg0 = "lazyfuse-test-child", filter_arg = "--gtest_filter=" + filter;
  char* argv[] = {arg0.data(), filter_arg.data(), nullptr};

  int fds[2];
  if (::pipe(fds) != 0) {
    c.error = std::string("pipe: ") + std::strerror(errno);
    return c;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    c.error = std::string("fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return c;
  }
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execve(exe.c_str(), argv, envp.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  c.pid = pid;
  c.output_fd = fds[0];
  return c;
}

/// Collects the output of a child of start_self and waits for it to end, killing it after `timeout_s` seconds
/// from now (a hang is a failure too). Returns how it ended and what it printed.
inline ChildResult finish(RunningChild& c, int timeout_s = 180) {
  ChildResult r;
  if (c.pid < 0) {
    r.output = c.error;
    return r;
  }
  r.started = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  char buf[4096];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      ::kill(c.pid, SIGKILL);
      break;
    }
    pollfd p{c.output_fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, int(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue; // the deadline check above ends it
    const ssize_t n = ::read(c.output_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break; // end of output: the child exited (or closed both streams)
    r.output.append(buf, std::size_t(n));
  }
  ::close(c.output_fd);
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  c.pid = -1;
  c.output_fd = -1;
  r.exited = WIFEXITED(status);
  if (r.exited) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

/// start_self and finish in one: runs the child to its end.
inline ChildResult run_self(const std::string& filter, const std::vector<std::string>& add,
                            const std::vector<std::string>& drop = {}, int timeout_s = 180) {
  RunningChild c = start_self(filter, add, drop);
  return finish(c, timeout_s);
}

} // namespace lazyfuse_test
