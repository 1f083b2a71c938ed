// Matrix Market writers: matrices as `coordinate real general` (or `complex general`), vectors as
// `array real general`, values with 17 significant digits (a float matrix's with its own shortest
// round-trip digits) so they read back bit-identical.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>

#include "core/values.hpp"
#include "io/io_internal.hpp"

namespace spmv::io {

namespace {

// Buffered writer that reports failures with the file name.
class Out {
 public:
  explicit Out(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "wb")) {
    if (!f_) fail();
  }
  ~Out() {
    if (f_) std::fclose(f_);
  }
  fmt::memory_buffer& buf() { return buf_; }
  void maybe_flush() {
    if (buf_.size() >= (std::size_t{1} << 22)) flush();
  }
  void close() {
    flush();
    const int rc = std::fclose(f_);
    f_ = nullptr;
    if (rc != 0) fail();
  }

 private:
  void flush() {
    if (buf_.size() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size()) fail();
    buf_.clear();
  }
  [[noreturn]] void fail() { throw Error(fmt::format("{}: cannot write: {}", path_, std::strerror(errno))); }
  std::string path_;
  std::FILE* f_;
  fmt::memory_buffer buf_;
};

}  // namespace

void write_matrix_market(const std::string& path, const CsrView& a, const std::string& generated) {
  Out out(path);
  auto it = std::back_inserter(out.buf());
  const bool cplx = a.is_complex();
  fmt::format_to(it, "%%MatrixMarket matrix coordinate {} general\n", cplx ? "complex" : "real");
  fmt::format_to(it, "% written by spmv; source field {}, symmetry {} (stored expanded)\n", to_string(a.field),
                 to_string(a.symmetry));
  if (!generated.empty()) fmt::format_to(it, "% spmv-generated: {}\n", generated);
  fmt::format_to(it, "{} {} {}\n", a.rows, a.cols, a.nnz());
  // Float values (a view over val_f32) with their own shortest round-trip digits ({}: 9 at most).
  spmv::detail::visit_values(a, [&](const auto* val) {
    for (index_t r = 0; r < a.rows; ++r) {
      for (offset_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
        if (cplx) fmt::format_to(it, "{} {} {:.17g} {:.17g}\n", r + 1, a.col[p] + 1, val[p], a.imag[p]);
        else if (a.values_in_float()) fmt::format_to(it, "{} {} {}\n", r + 1, a.col[p] + 1, val[p]);
        else fmt::format_to(it, "{} {} {:.17g}\n", r + 1, a.col[p] + 1, val[p]);
      }
      out.maybe_flush();
    }
  });
  out.close();
}

void write_dense_vector(const std::string& path, const std::vector<double>& v) {
  Out out(path);
  auto it = std::back_inserter(out.buf());
  fmt::format_to(it, "%%MatrixMarket matrix array real general\n{} 1\n", v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    fmt::format_to(it, "{:.17g}\n", v[i]);
    if ((i & 0xffff) == 0) out.maybe_flush();
  }
  out.close();
}

}  // namespace spmv::io
