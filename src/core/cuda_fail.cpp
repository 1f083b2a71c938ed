// The CUDA error path lives in host C++ so CUDA files need no formatting library.
#include <spmv/types.hpp>

#include <fmt/format.h>

namespace spmv::cuda {

[[noreturn]] void fail(const char* what, const char* file, int line, const std::string& detail) {
  throw Error(fmt::format("CUDA error: {} failed at {}:{}: {}", what, file, line, detail));
}

}  // namespace spmv::cuda
