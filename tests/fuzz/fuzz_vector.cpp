// The vector reader (run --x FILE): an array or coordinate vector, or an error.
#include "fuzz_common.hpp"

using namespace spmv;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  io::ReadOptions opt;
  opt.memory_budget_bytes = fuzz::kBudget;
  opt.threads = 1;
  try {
    io::detail::ByteSource src = io::detail::ByteSource::memory(fuzz::bytes(data, size), "fuzz_vec.mtx");
    (void)io::detail::dense_vector(src, opt);
  } catch (const Error&) {}
  return 0;
}
