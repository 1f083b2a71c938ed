// The gzip path: the input after a gzip header (so that most inputs reach the inflater) or as it is
// (multi-member files, trailing bytes), read as a matrix or a binary cache: a result or an error.
#include "fuzz_common.hpp"

using namespace spmv;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string input;
  if (size > 0 && data[0] % 2 == 0) input.assign("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10);
  input.append(fuzz::bytes(data, size));
  io::ReadOptions opt;
  opt.memory_budget_bytes = fuzz::kBudget;
  opt.threads = 1;
  try {
    io::detail::ByteSource src = io::detail::ByteSource::memory(input, "fuzz.mtx.gz");
    if (io::detail::has_binary_magic(src.head())) (void)io::detail::read_binary(src, opt, nullptr);
    else (void)io::detail::parse(src, opt, {.block_bytes = std::size_t{1} << 16});
  } catch (const Error&) {
  }
  return 0;
}
