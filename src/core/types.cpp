#include <spmv/matrix.hpp>
#include <spmv/plan.hpp>

#include <fmt/format.h>

namespace spmv {

const char* to_string(Field f) {
  switch (f) {
    case Field::Real: return "real";
    case Field::Integer: return "integer";
    case Field::Pattern: return "pattern";
    case Field::Complex: return "complex";
  }
  return "?";
}

const char* to_string(Symmetry s) {
  switch (s) {
    case Symmetry::General: return "general";
    case Symmetry::Symmetric: return "symmetric";
    case Symmetry::SkewSymmetric: return "skew-symmetric";
    case Symmetry::Hermitian: return "hermitian";
  }
  return "?";
}

const char* to_string(Backend b) {
  switch (b) {
    case Backend::Serial: return "serial";
    case Backend::Omp: return "omp";
    case Backend::Cuda: return "cuda";
  }
  return "?";
}

Backend parse_backend(std::string_view s) {
  if (s == "serial") return Backend::Serial;
  if (s == "omp" || s == "openmp") return Backend::Omp;
  if (s == "cuda" || s == "gpu") return Backend::Cuda;
  throw Unsupported(fmt::format("unknown backend '{}' (expected serial, omp or cuda)", s));
}

ParseError::ParseError(const std::string& f, std::int64_t l, const std::string& r)
    : Error(l > 0 ? fmt::format("{}:{}: {}", f, l, r) : fmt::format("{}: {}", f, r)),
      file(f), line(l), reason(r) {}

void require_real(const Csr& a, const std::string& what) {
  if (a.is_complex())
    throw Unsupported(fmt::format("{} needs a real matrix; this one is complex "
                                  "(complex values are read and stored, but only real kernels exist)",
                                  what));
}

}  // namespace spmv
