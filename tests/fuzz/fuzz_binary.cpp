// The binary cache (built with FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION: checksums are not
// checked, so mutated headers and payloads reach the size and structure checks): a valid CSR or an
// error, never an allocation beyond the budget or a read past the input.
#include "fuzz_common.hpp"

using namespace spmv;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string input(fuzz::bytes(data, size));
  if (!io::detail::has_binary_magic(input)) input.insert(0, "SPMVBIN\x1a", 8);
  io::ReadOptions opt;
  opt.memory_budget_bytes = fuzz::kBudget;
  try {
    io::detail::ByteSource src = io::detail::ByteSource::memory(input, "fuzz.spmvbin");
    const Csr a = io::detail::read_binary(src, opt, nullptr);
    if (!csr_structure_error(a).empty()) fuzz::disagree("a binary cache read into a malformed CSR");
  } catch (const Error&) {}
  return 0;
}
