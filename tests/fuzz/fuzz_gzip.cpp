// The gzip path: the input after a gzip header (so that most inputs reach the inflater) or as it is
// (multi-member files, trailing bytes), read as a matrix or a binary cache: a result or an error.
// A matrix read straight into CSR (two passes, inflated again for the second; once into row groups)
// gives the same error, or the CSR of the read through the COO bit for bit.
#include <cstring>

#include "fuzz_common.hpp"

using namespace spmv;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string input;
  if (size > 0 && data[0] % 2 == 0) input.assign("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10);
  input.append(fuzz::bytes(data, size));
  io::ReadOptions opt;
  opt.memory_budget_bytes = fuzz::kBudget;
  opt.threads = 2;
  // Both reads in the same blocks: which error comes first (a line's or the gzip stream's) depends
  // on how far the inflater has read.
  const io::detail::ParseTuning tune{.block_bytes = 97, .min_chunk = 7};
  std::string error;
  Csr through_coo;
  try {
    io::detail::ByteSource src = io::detail::ByteSource::memory(input, "fuzz.mtx.gz");
    if (io::detail::has_binary_magic(src.head())) {
      try {
        (void)io::detail::read_binary(src, opt, nullptr);
      } catch (const Error&) {}
      return 0;
    }
    through_coo = coo_to_csr(io::detail::parse(src, opt, tune).coo);
  } catch (const Error& e) {
    error = e.what();
  }
  const auto same_bits = [](const Array<double>& x, const Array<double>& y) {
    return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0);
  };
  for (const io::detail::StraightToCsr how : {io::detail::StraightToCsr::Always, io::detail::StraightToCsr::Once}) {
    std::string straight_error;
    Csr straight;
    try {
      io::detail::ByteSource src = io::detail::ByteSource::memory(input, "fuzz.mtx.gz");
      (void)src.head();  // as the reader's entry points peek before parsing
      io::detail::ParseTuning forced = tune;
      forced.straight_to_csr = how;
      if (how == io::detail::StraightToCsr::Once) forced.repeat_check = 0;  // handed over after the first block
      straight = io::detail::parse_csr<double>(src, opt, forced).csr;
    } catch (const Error& e) {
      straight_error = e.what();
    }
    if (straight_error != error)
      fuzz::disagree("errors differ straight into CSR: '" + error + "' vs '" + straight_error + "'");
    if (!error.empty()) continue;
    if (straight.rows != through_coo.rows || straight.cols != through_coo.cols ||
        straight.row_ptr != through_coo.row_ptr || straight.col != through_coo.col ||
        !same_bits(straight.val, through_coo.val) || !same_bits(straight.imag, through_coo.imag))
      fuzz::disagree("the straight read's CSR differs");
  }
  return 0;
}
