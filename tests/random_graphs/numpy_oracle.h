// The NumPy oracle's driver for tests/test_random_graphs.cpp: programs are written in batches to a JSON-lines file
// (one program a line: its Python text, its inputs' exact values, and per checked array lazyfuse's dtype, shape,
// values and the reference's error bounds), and a Python process (tests/numpy_oracle.py --serve) checks each batch
// while the test generates the next one. One such process serves the whole test process (OracleServer):
// importing NumPy and ml_dtypes takes most of a second.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

#ifndef LAZYFUSE_TEST_SOURCE_DIR
#error "LAZYFUSE_TEST_SOURCE_DIR must name the tests folder (tests/CMakeLists.txt defines it)"
#endif

namespace random_graphs {

// A string as a JSON string literal.
inline std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += c;
      }
    }
  }
  return out + "\"";
}

// A double as a JSON number that reads back as the same double (Python's json reads NaN and Infinity).
inline void json_number(std::string& out, double x) {
  if (std::isnan(x)) {
    out += "NaN";
  } else if (std::isinf(x)) {
    out += x > 0 ? "Infinity" : "-Infinity";
  } else if (x == std::trunc(x) && std::fabs(x) < 1e15) {
    out += std::to_string(static_cast<long long>(x));
  } else {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    out += buf;
  }
}

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs a shell command; its standard output and exit status.
inline int run_command(const std::string& cmd, std::string& output) {
  output.clear();
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) output.append(buf, n);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct NumpyAvailability {
  std::string python;  // the interpreter (LAZYFUSE_TEST_PYTHON)
  std::string version; // NumPy's, when usable
  std::string why_not; // empty when usable
};

// Whether LAZYFUSE_TEST_PYTHON names a Python with NumPy >= 2 (asked once per process).
inline const NumpyAvailability& numpy_availability() {
  static const NumpyAvailability a = [] {
    NumpyAvailability r;
    const char* py = std::getenv("LAZYFUSE_TEST_PYTHON");
    if (!py || !*py) {
      r.why_not = "LAZYFUSE_TEST_PYTHON is not set: point it at a Python with NumPy >= 2 from PyPI, e.g. "
                  "python3 -m venv build/venv && build/venv/bin/pip install 'numpy>=2,<3' && "
                  "export LAZYFUSE_TEST_PYTHON=$PWD/build/venv/bin/python";
      return r;
    }
    r.python = py;
    std::string out;
    const int rc = run_command(shell_quote(py) + " -c 'import numpy; print(\"numpy\", numpy.__version__)' 2>&1", out);
    const auto at = out.find("numpy ");
    if (rc != 0 || at == std::string::npos) {
      r.why_not = "LAZYFUSE_TEST_PYTHON=" + r.python + " cannot import numpy (exit " + std::to_string(rc) +
                  "): " + out.substr(0, 300);
      return r;
    }
    r.version = out.substr(at + 6);
    while (!r.version.empty() && std::isspace(static_cast<unsigned char>(r.version.back()))) r.version.pop_back();
    if (std::atoi(r.version.c_str()) < 2)
      r.why_not = "LAZYFUSE_TEST_PYTHON=" + r.python + " has NumPy " + r.version +
                  ", before NumPy 2's promotion rules (NEP 50); install numpy>=2,<3 from PyPI in a virtual environment";
    return r;
  }();
  return a;
}

inline bool ci_requires_numpy() {
  const char* ci = std::getenv("CI");
  return ci && std::string(ci) == "true";
}

// The Python process that runs tests/numpy_oracle.py --serve: one per test process, started by the first oracle
// (importing NumPy and ml_dtypes takes most of a second, paid once and while the first programs are generated).
// It reads "BATCH OUT" lines on its stdin, writes each batch's report to OUT and answers "exit N" on its stdout;
// it ends when its stdin closes (also when this process dies).
class OracleServer {
public:
  static OracleServer& get() {
    static OracleServer server;
    return server;
  }
  // Sends a batch; false (after reporting) when the server is not running.
  bool send(const std::string& in, const std::string& out) {
    if (!to_) {
      ADD_FAILURE() << "the NumPy oracle's Python process is not running: " << why_;
      return false;
    }
    const std::string line = in + " " + out + "\n";
    if (std::fputs(line.c_str(), to_) < 0 || std::fflush(to_) != 0) {
      ADD_FAILURE() << "cannot send a batch to the NumPy oracle's Python process (it ended?)";
      return false;
    }
    return true;
  }
  // The answer to the oldest batch sent: "exit N", or empty when the process ended.
  std::string receive() {
    char buf[256];
    if (!from_ || !std::fgets(buf, sizeof buf, from_)) return "";
    return buf;
  }
  OracleServer(const OracleServer&) = delete;
  OracleServer& operator=(const OracleServer&) = delete;

private:
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
  pid_t pid_ = -1;
  std::string why_;

  OracleServer() {
    // A write to a process that ended is an error to report, not a signal that ends the test.
    std::signal(SIGPIPE, SIG_IGN);
    int to[2], from[2];
    if (pipe(to) != 0 || pipe(from) != 0) {
      why_ = "pipe() failed";
      return;
    }
    const std::string python = numpy_availability().python;
    const std::string script = std::string(LAZYFUSE_TEST_SOURCE_DIR) + "/numpy_oracle.py";
    pid_ = fork();
    if (pid_ == 0) {
      dup2(to[0], 0);
      dup2(from[1], 1);
      close(to[0]);
      close(to[1]);
      close(from[0]);
      close(from[1]);
      execlp(python.c_str(), python.c_str(), script.c_str(), "--serve", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to[0]);
    close(from[1]);
    if (pid_ < 0) {
      why_ = "fork() failed";
      close(to[1]);
      close(from[0]);
      return;
    }
    to_ = fdopen(to[1], "w");
    from_ = fdopen(from[0], "r");
  }
  ~OracleServer() {
    if (to_) std::fclose(to_); // end of input: the server exits
    if (from_) std::fclose(from_);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
  }
};

class NumpyOracle {
public:
  static constexpr std::int64_t kBatchPrograms = 400;
  static constexpr std::size_t kBatchBytes = std::size_t(48) << 20;

  explicit NumpyOracle(std::string label) : label_(std::move(label)) { OracleServer::get(); }
  NumpyOracle(const NumpyOracle&) = delete;
  NumpyOracle& operator=(const NumpyOracle&) = delete;
  ~NumpyOracle() { finish(); }

  // One program: its JSON record, and its C++ text for the failure message.
  void add(std::int64_t case_no, const std::string& record, const std::string& cpp) {
    buffer_ += record;
    buffer_ += '\n';
    programs_[case_no] = cpp;
    if (std::int64_t(programs_.size()) >= kBatchPrograms || buffer_.size() >= kBatchBytes) flush();
  }

  // Waits for every batch.
  void finish() {
    if (!programs_.empty()) flush();
    collect();
  }

  // Whether the files of a batch that failed stay for inspection (the default).
  void keep_failed(bool keep) { keep_failed_ = keep; }
  std::int64_t programs() const { return programs_checked_; }
  // Programs the oracle could not write in NumPy (bfloat16 with an ml_dtypes older than lazyfuse's promotion rules).
  std::int64_t unchecked_programs() const { return unchecked_; }
  std::int64_t mismatching_programs() const { return mismatches_; }
  // Per disagreeing program, the labels of its disagreeing results (the test's "category|reduction").
  const std::vector<std::pair<std::int64_t, std::vector<std::string>>>& mismatching_labels() const {
    return mismatching_labels_;
  }
  std::int64_t elements() const { return elements_; }
  double python_seconds() const { return python_seconds_; }

private:
  struct Running {
    std::string in, out;
    std::map<std::int64_t, std::string> programs;
  };
  std::string label_;
  std::string buffer_;
  std::map<std::int64_t, std::string> programs_;
  std::optional<Running> running_;
  int batches_ = 0;
  bool keep_failed_ = true;
  std::int64_t programs_checked_ = 0, mismatches_ = 0, elements_ = 0, unchecked_ = 0;
  std::vector<std::pair<std::int64_t, std::vector<std::string>>> mismatching_labels_;
  double python_seconds_ = 0;

  // Writes the batch and hands it to the Python process (after the previous one is done: one at a time, so
  // that the test generates the next batch while Python checks this one).
  void flush() {
    collect();
    Running r;
    const std::string stem =
        "random_graphs_numpy_" + std::to_string(getpid()) + "_" + label_ + "_" + std::to_string(batches_++);
    r.in = stem + ".jsonl";
    r.out = stem + ".out";
    {
      std::ofstream f(r.in, std::ios::binary);
      f << buffer_;
      f.close();
      if (!f) {
        ADD_FAILURE() << "cannot write the NumPy oracle's batch file " << r.in;
        return;
      }
    }
    buffer_.clear();
    r.programs.swap(programs_);
    if (!OracleServer::get().send(r.in, r.out)) return;
    running_ = std::move(r);
  }

  // Waits for the running batch and reports what it found.
  void collect() {
    if (!running_) return;
    Running r = std::move(*running_);
    running_.reset();
    const std::string status = OracleServer::get().receive();
    std::ifstream f(r.out, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string out = ss.str();
    const int rc = status.rfind("exit ", 0) == 0 ? std::atoi(status.c_str() + 5) : -1;
    // The report: "MISMATCH <case>" ... "END" blocks, then one "SUMMARY ..." line.
    std::istringstream lines(out);
    std::string line, block;
    std::vector<std::string> labels;
    std::int64_t current = -1, found = 0;
    bool summary = false;
    while (std::getline(lines, line)) {
      if (line.rfind("MISMATCH ", 0) == 0) {
        current = std::atoll(line.c_str() + 9);
        block.clear();
        labels.clear();
      } else if (line == "END" && current >= 0) {
        ++found;
        mismatching_labels_.push_back({current, labels});
        if (++mismatches_ <= 5) {
          auto it = r.programs.find(current);
          ADD_FAILURE() << "NumPy disagrees with lazyfuse in case " << current << ":\n"
                        << block << "C++ program:\n"
                        << (it == r.programs.end() ? std::string("?") : it->second);
        }
        current = -1;
      } else if (current >= 0 && line.rfind("LABEL ", 0) == 0) {
        labels.push_back(line.substr(6));
      } else if (current >= 0) {
        block += line + "\n";
      } else if (line.rfind("SUMMARY ", 0) == 0) {
        summary = true;
        std::istringstream fields(line.substr(8));
        std::string kv;
        while (fields >> kv) {
          const auto eq = kv.find('=');
          if (eq == std::string::npos) continue;
          const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
          if (k == "programs") programs_checked_ += std::atoll(v.c_str());
          if (k == "elements") elements_ += std::atoll(v.c_str());
          if (k == "unchecked") unchecked_ += std::atoll(v.c_str());
          if (k == "seconds") python_seconds_ += std::atof(v.c_str());
        }
      }
    }
    const bool ok = rc == 0 && summary && found == 0;
    if (!summary || (rc != 0 && found == 0))
      ADD_FAILURE() << "the NumPy oracle failed (exit " << rc << ") on " << r.in << ":\n"
                    << out.substr(out.size() > 4000 ? out.size() - 4000 : 0);
    if (ok || !keep_failed_) {
      std::remove(r.in.c_str());
      std::remove(r.out.c_str());
    } else {
      std::printf("NumPy oracle: kept %s and %s\n", r.in.c_str(), r.out.c_str());
    }
  }
};

} // namespace random_graphs
