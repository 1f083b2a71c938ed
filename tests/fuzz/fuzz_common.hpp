#pragma once
// Shared by the fuzz targets: a small memory budget (a header may claim anything; each run must
// stay small and fast) and a trap on any disagreement, which libFuzzer reports as a crash.
#include <spmv/io.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "io/byte_source.hpp"
#include "io/io_internal.hpp"

namespace spmv::fuzz {

inline constexpr double kBudget = 16.0 * 1024 * 1024;

inline std::string_view bytes(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

[[noreturn]] inline void disagree(const std::string& what) {
  std::fprintf(stderr, "fuzz: %s\n", what.c_str());
  std::abort();
}

}  // namespace spmv::fuzz
