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
#include <sys/wait.h>

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
    const std::string out = tmp("stdout.txt"), err = tmp("stderr.txt");
    const std::string pipe = pipe_from.empty() ? "" : fmt::format("cat '{}' | ", pipe_from);
    const int rc = std::system(fmt::format("{}'{}' {} > '{}' 2> '{}'", pipe, SPMV_CLI, args, out, err).c_str());
    Result r;
    r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  ScratchDir dir_;
};

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
