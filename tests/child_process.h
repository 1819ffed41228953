// Running this test program again in a child process, for what one process cannot check twice: a setting read
// once per process (the backend), or a CUDA context lost on purpose. The child is this binary (/proc/self/exe)
// run with --gtest_filter naming its one test; it is started with fork + exec only, since a forked copy of a
// process that initialized CUDA cannot use CUDA.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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

/// Runs this program with `--gtest_filter=<filter>`, in this process' environment without the GTEST_* variables
/// and without the variables named in `drop`, plus the "NAME=value" entries of `add`. Kills it after `timeout_s`
/// seconds (a hang is a failure too). Returns how it ended and what it printed.
inline ChildResult run_self(const std::string& filter, const std::vector<std::string>& add,
                            const std::vector<std::string>& drop = {}, int timeout_s = 180) {
  ChildResult r;
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
    r.output = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    r.output = std::string("fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return r;
  }
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execve(exe.c_str(), argv, envp.data());
    ::_exit(127);
  }
  r.started = true;
  ::close(fds[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  char buf[4096];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, int(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue; // the deadline check above ends it
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break; // end of output: the child exited (or closed both streams)
    r.output.append(buf, std::size_t(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exited = WIFEXITED(status);
  if (r.exited) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

} // namespace lazyfuse_test
