// The Matrix Market text reader: any input is a matrix or a ParseError, never a crash, a hang or an
// unbounded allocation; one thread with one block and one chunk, and three threads with blocks of
// a few dozen bytes and chunks of a few bytes, give the same entries or the same message; so does a
// read that sums repeated positions as it goes (as CSR), and the reads straight into CSR (two
// passes, and once into row groups; as CSR, bit for bit); the in-place CSR conversion gives the
// copying one's structure.
#include "fuzz_common.hpp"

using namespace spmv;

namespace {

template <class V = double>
struct Outcome {
  std::string error;
  io::detail::BasicParsed<V> parsed;
};

template <class V = double>
Outcome<V> read(std::string_view text, int threads, const io::detail::ParseTuning& tune) {
  Outcome<V> o;
  io::ReadOptions opt;
  opt.threads = threads;
  opt.memory_budget_bytes = fuzz::kBudget;
  try {
    io::detail::ByteSource src = io::detail::ByteSource::memory(text, "fuzz.mtx");
    o.parsed = io::detail::parse<V>(src, opt, tune);
  } catch (const Error& e) {
    o.error = e.what();
  }
  return o;
}

// A read straight into CSR, forced (Always: mm_direct; Once: row groups, handed over after the
// first block): its error, or its matrix.
Outcome<double> read_straight(std::string_view text, Csr& csr, io::detail::StraightToCsr how) {
  Outcome<double> o;
  io::ReadOptions opt;
  opt.threads = 3;
  opt.memory_budget_bytes = fuzz::kBudget;
  try {
    io::detail::ByteSource src = io::detail::ByteSource::memory(text, "fuzz.mtx");
    csr = io::detail::parse_csr<double>(
              src, opt,
              {.block_bytes = 41 + text.size() % 53,
               .min_chunk = 5,
               .repeat_check = how == io::detail::StraightToCsr::Once ? 0 : std::int64_t{1} << 21,
               .straight_to_csr = how})
              .csr;
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
  // In float: the same entries with each value rounded once, or a refusal of its own (a value
  // beyond float's range, a complex file); a file double refuses, float refuses too (but for the
  // memory budget, which float's 12 bytes an entry may meet where double's 16 do not).
  const Outcome single = read<float>(text, 3, {.block_bytes = 37 + size % 61, .min_chunk = 5});
  if (!one.error.empty() && single.error.empty() && one.error.find("the memory budget") == std::string::npos)
    fuzz::disagree("float read a file double refuses: " + one.error);
  if (one.error.empty() && !single.error.empty() && single.error.find("single precision") == std::string::npos &&
      single.error.find("complex matrix is read in double") == std::string::npos)
    fuzz::disagree("float refused a file double reads: " + single.error);
  if (one.error.empty() && single.error.empty()) {
    const auto& d = one.parsed.coo.val;
    const auto& f = single.parsed.coo.val;
    if (f.size() != d.size() || single.parsed.coo.row != one.parsed.coo.row) fuzz::disagree("float entries differ");
    for (std::size_t i = 0; i < f.size(); ++i) {
      const float want = static_cast<float>(d[i]);
      if (std::memcmp(&f[i], &want, sizeof want) != 0 && !(std::isnan(f[i]) && std::isnan(want)))
        fuzz::disagree("a float value is not the double one rounded");
    }
  }
  // Repeated positions summed while reading (sampled from the second entry on): the same error,
  // or the copying conversion's matrix bit for bit.
  const Outcome merged = read(text, 3, {.block_bytes = 37 + size % 61, .min_chunk = 5, .repeat_check = 2});
  if (one.error != merged.error)
    fuzz::disagree("errors differ when merging: '" + one.error + "' vs '" + merged.error + "'");
  using io::detail::StraightToCsr;
  if (!one.error.empty()) {
    Csr unused;
    for (const StraightToCsr how : {StraightToCsr::Always, StraightToCsr::Once})
      if (const Outcome s = read_straight(text, unused, how); s.error != one.error)
        fuzz::disagree("errors differ straight into CSR: '" + one.error + "' vs '" + s.error + "'");
    return 0;
  }
  const Coo& a = one.parsed.coo;
  const Coo& b = many.parsed.coo;
  if (a.row != b.row || a.col != b.col || a.val.size() != b.val.size() || a.rows != b.rows || a.cols != b.cols)
    fuzz::disagree("entries differ between one block and many");
  const auto same_bits = [](const Array<double>& x, const Array<double>& y) {  // NaN payloads too
    return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0);
  };
  if (!same_bits(a.val, b.val)) fuzz::disagree("values differ between one block and many");
  const Csr copied = coo_to_csr(a);
  const Csr summed = coo_to_csr(merged.parsed.coo);
  if (summed.row_ptr != copied.row_ptr || summed.col != copied.col || !same_bits(summed.val, copied.val) ||
      !same_bits(summed.imag, copied.imag))
    fuzz::disagree("the merged read's CSR differs");
  Coo moved = a;
  const Csr in_place = coo_to_csr(std::move(moved));
  if (copied.row_ptr != in_place.row_ptr || copied.col != in_place.col) fuzz::disagree("in-place CSR differs");
  if (!csr_structure_error(in_place).empty())
    fuzz::disagree("in-place CSR is malformed: " + csr_structure_error(in_place));
  for (const StraightToCsr how : {StraightToCsr::Always, StraightToCsr::Once}) {
    Csr straight;
    if (const Outcome s = read_straight(text, straight, how); !s.error.empty())
      fuzz::disagree("the straight read refused: " + s.error);
    if (straight.rows != copied.rows || straight.cols != copied.cols || straight.row_ptr != copied.row_ptr ||
        straight.col != copied.col || !same_bits(straight.val, copied.val) || !same_bits(straight.imag, copied.imag))
      fuzz::disagree("the straight read's CSR differs");
  }
  return 0;
}
