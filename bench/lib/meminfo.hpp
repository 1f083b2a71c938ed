#pragma once
// Internal: one field of /proc/meminfo ("MemTotal:", "MemAvailable:", ...) in bytes; 0 when the
// file or the field is missing.
#include <fstream>
#include <string>
#include <string_view>

namespace spmv {

inline double meminfo_bytes(std::string_view field) {
  std::ifstream f("/proc/meminfo");
  std::string key, unit;
  double kb = 0;
  while (f >> key >> kb >> unit)
    if (key == field) return kb * 1024.0;
  return 0;
}

}  // namespace spmv
