#include "shared_path.hpp"

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace spmv {

std::string shared_path(const char* env_var, const std::string& rel, bool folder) {
  if (const char* e = std::getenv(env_var); e && *e) return e;
  std::vector<std::string> cand;
#ifdef SPMV_SOURCE_DIR
  cand.push_back(std::string(SPMV_SOURCE_DIR) + "/../shared/" + rel);
  cand.push_back(std::string(SPMV_SOURCE_DIR) + "/../../shared/" + rel);
#endif
  cand.push_back("../shared/" + rel);
  std::error_code ec;
  for (const auto& c : cand)
    if (folder ? std::filesystem::is_directory(c, ec) : std::filesystem::exists(c, ec)) return c;
  return cand.front();
}

}  // namespace spmv
