#pragma once
// Running the spmv command line as a process in tests (path from the SPMV_CLI compile definition):
// stdout, stderr and exit status captured; "key: value" output parsed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <fcntl.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <vector>

#include "test_util.hpp"

namespace spmv::test {

inline const std::string kDir = std::string(SPMV_TEST_DATA) + "/mm";

struct Result {
  int status = -1;
  std::string out, err;
};

class Cli : public ::testing::Test {
 protected:
  std::string tmp(const std::string& name) const { return dir_ / name; }

  // Runs `spmv ARGS`, capturing stdout, stderr and the exit status.
  // With `pipe_from`, that file is piped into the command's stdin through cat.
  Result run(const std::string& args, const std::string& pipe_from = "") const {
    return run_program(SPMV_CLI, args, pipe_from);
  }
  // The same for another program (an example).
  Result run_program(const std::string& program, const std::string& args, const std::string& pipe_from = "") const {
    const std::string out = tmp("stdout.txt"), err = tmp("stderr.txt");
    const std::string pipe = pipe_from.empty() ? "" : fmt::format("cat '{}' | ", pipe_from);
    const int rc = std::system(fmt::format("{}'{}' {} > '{}' 2> '{}'", pipe, program, args, out, err).c_str());
    Result r;
    r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  ScratchDir dir_;
};

// Runs `spmv ARGS...` directly (no shell) with its output discarded, `env` ("NAME=value") added to
// the environment, and waits for it with wait4: its exit status and its peak resident memory in
// MiB. fork, not posix_spawn: Linux carries the exec'ing process's old memory's high-water mark
// into ru_maxrss, and a vfork child's old memory is this test process's own (its peak over every
// test so far); a forked copy's mark is this process's present size, its large buffers returned.
struct Peak {
  int status = -1;
  double mib = 0;
};
inline Peak run_for_peak(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  std::vector<char*> argv{const_cast<char*>(SPMV_CLI)};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  for (char** e = environ; *e; ++e) envp.push_back(*e);
  envp.push_back(nullptr);
  Peak p;
  const pid_t pid = fork();
  if (pid < 0) return p;
  if (pid == 0) {  // async-signal-safe calls only until exec (the test process has threads)
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, 1);
      dup2(null, 2);
      if (null > 2) close(null);
    }
    execve(SPMV_CLI, argv.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) return p;
  p.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  p.mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // kB
  return p;
}

// "key: value" lines -> map.
inline std::map<std::string, std::string> keys(const std::string& out) {
  std::map<std::string, std::string> m;
  std::istringstream s(out);
  std::string line;
  while (std::getline(s, line)) {
    const auto c = line.find(": ");
    if (c != std::string::npos) m[line.substr(0, c)] = line.substr(c + 2);
  }
  return m;
}

}  // namespace spmv::test
