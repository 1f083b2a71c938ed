// The Matrix Market text reader: any input is a matrix or a ParseError, never a crash, a hang or an
// unbounded allocation; one thread with one block and one chunk, and three threads with blocks of
// a few dozen bytes and chunks of a few bytes, give the same entries or the same message; the
// in-place CSR conversion gives the copying one's structure.
#include "fuzz_common.hpp"

using namespace spmv;

namespace {

struct Outcome {
  std::string error;
  io::detail::Parsed parsed;
};

Outcome read(std::string_view text, int threads, const io::detail::ParseTuning& tune) {
  Outcome o;
  io::ReadOptions opt;
  opt.threads = threads;
  opt.memory_budget_bytes = fuzz::kBudget;
  try {
    io::detail::ByteSource src = io::detail::ByteSource::memory(text, "fuzz.mtx");
    o.parsed = io::detail::parse(src, opt, tune);
  } catch (const Error& e) {
    o.error = e.what();
  }
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::bytes(data, size);
  const Outcome one = read(text, 1, {.block_bytes = std::size_t{1} << 16});  // one block: inputs are at most 64 KiB
  const Outcome many = read(text, 3, {.block_bytes = 37 + size % 61, .min_chunk = 5});
  if (one.error != many.error) fuzz::disagree("errors differ: '" + one.error + "' vs '" + many.error + "'");
  if (!one.error.empty()) return 0;
  const Coo& a = one.parsed.coo;
  const Coo& b = many.parsed.coo;
  if (a.row != b.row || a.col != b.col || a.val.size() != b.val.size() || a.rows != b.rows || a.cols != b.cols)
    fuzz::disagree("entries differ between one block and many");
  for (std::size_t i = 0; i < a.val.size(); ++i)
    if (std::memcmp(&a.val[i], &b.val[i], sizeof(double)) != 0) fuzz::disagree("values differ between one block and many");
  const Csr copied = coo_to_csr(a);
  Coo moved = a;
  const Csr in_place = coo_to_csr(std::move(moved));
  if (copied.row_ptr != in_place.row_ptr || copied.col != in_place.col) fuzz::disagree("in-place CSR differs");
  if (!csr_structure_error(in_place).empty()) fuzz::disagree("in-place CSR is malformed: " + csr_structure_error(in_place));
  return 0;
}
