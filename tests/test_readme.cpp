// Every command line README's "Command line" section shows runs and succeeds, in the order shown
// (bench writes the results.csv that report reads), with its placeholders filled: FILE and
// [FILES|DIRS] a real matrix, A.mtx a copy of it, NAME a course-report matrix, DIR a folder. bench
// runs its quick sweep (--quick --no-progress and no bracketed options: the shown ones name a GPU
// this machine may lack); every other command runs as shown.
#include <gtest/gtest.h>

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "test_util.hpp"

namespace {

namespace fs = std::filesystem;

// README's "    spmv ..." lines, without their comments.
std::vector<std::string> readme_commands() {
  std::ifstream f(fs::path(SPMV_TEST_DATA).parent_path().parent_path() / "README.md");
  std::vector<std::string> out;
  for (std::string line; std::getline(f, line);) {
    if (!line.starts_with("    spmv ")) continue;
    line = line.substr(4);
    if (const auto hash = line.find("  #"); hash != std::string::npos) line = line.substr(0, hash);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out.push_back(line);
  }
  return out;
}

std::string replace_word(std::string s, const std::string& word, const std::string& by) {
  return std::regex_replace(s, std::regex("(^|[ ])" + word + "($|[ ])"), "$1" + by + "$2");
}

TEST(Readme, EveryCommandItShowsRuns) {
  const std::vector<std::string> commands = readme_commands();
  ASSERT_GE(commands.size(), 8u) << "README's command lines were not found";
  const spmv::test::ScratchDir dir;
  const std::string matrix = std::string(SPMV_TEST_DATA) + "/suitesparse/cage9.mtx.gz";
  const std::string copy = dir / "A.mtx";
  ASSERT_EQ(std::system(fmt::format("gzip -dc '{}' > '{}'", matrix, copy).c_str()), 0);
  for (std::string c : commands) {
    const std::string shown = c;
    c = replace_word(c, "-o FILE", "-o " + (dir / "alike.mtx"));
    c = replace_word(c, "FILE", matrix);
    c = replace_word(c, "A.mtx", copy);
    c = replace_word(c, "A.spmvbin", dir / "A.spmvbin");
    c = replace_word(c, "NAME", "cage4");
    c = replace_word(c, "results.csv", dir / "results.csv");
    c = replace_word(c, "DIR", dir / "report");
    if (c.starts_with("spmv bench ")) {
      c = std::regex_replace(c, std::regex(" \\[FILES\\|DIRS\\]"), " " + matrix);
      c = std::regex_replace(c, std::regex(" \\[[^\\]]*\\]"), "");
      c += " --quick --no-progress -o " + (dir / "results.csv");
    }
    EXPECT_EQ(c.find_first_of("[]"), std::string::npos) << "a placeholder left in: " << c;
    const std::string log = dir / "log.txt";
    const int rc = std::system(fmt::format("'{}' {} > '{}' 2>&1", SPMV_CLI, c.substr(5), log).c_str());
    EXPECT_EQ(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, 0) << shown << "\nran as: " << c << "\n" << spmv::test::slurp(log);
  }
  EXPECT_TRUE(fs::exists(dir / "A.spmvbin"));
  EXPECT_TRUE(fs::exists(dir / "alike.mtx"));
  EXPECT_TRUE(fs::exists(dir / "report/report.md"));
}

}  // namespace
