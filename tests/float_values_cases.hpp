#pragma once
// Plans over a matrix kept in float (CsrView::val_f32, CsrView::val empty): every kernel of the
// backends under test (conformance.hpp: Serial and Omp in spmv_tests, Cuda in spmv_gpu_tests) that
// computes in single or mixed precision must give, from the float matrix, bit for bit the product
// of the same plan made from the double matrix whose values round to those floats; double plans
// must refuse it. Included by test_float_values.cpp and gpu/test_cuda_float_values.cpp.
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <spmv/io.hpp>

#include "conformance.hpp"

namespace spmv::test {

// s without its parenthesised parts (a trial's timings: "(trial us: simd 1.2, scalar 1.4)").
inline std::string without_parentheses(const std::string& s) {
  std::string out;
  int depth = 0;
  for (const char c : s) {
    if (c == '(')
      ++depth;
    else if (c == ')' && depth > 0)
      --depth;
    else if (depth == 0)
      out += c;
  }
  return out;
}

// What a plan runs, without the timings that led to it: the kernel's detail (its variant, inner
// loop, shape, threads), and for "auto" its choice and the chosen kernel's detail. Two plans that
// say the same run the same arithmetic; trials may choose differently between two makings.
inline std::string configuration(const Plan& p) {
  if (p.chosen.empty()) return without_parentheses(p.detail);
  const std::string tail = "; " + chosen_kernel(p.chosen) + ": ";
  const auto at = p.detail.rfind(tail);
  return p.chosen + " |" + (at == std::string::npos ? "" : without_parentheses(p.detail.substr(at + tail.size())));
}

// First index where a and b differ in their bits, or -1.
inline long long first_bit_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<std::uint64_t>(a[i]) != std::bit_cast<std::uint64_t>(b[i])) return static_cast<long long>(i);
  return -1;
}

struct FloatValueCounts {
  int bitwise = 0;                  // products compared bit for bit
  int by_reference = 0;             // compared with the reference only (a run-to-run nondeterministic baseline,
                                    // or trials that chose differently in every making)
  int refused = 0;                  // refused alike from both matrices (a padded format's memory limit)
  std::vector<std::string> unlike;  // the configurations that were compared by the reference, and why
};

// One configuration: the plan from the double matrix `a` and from its float copy `f` with the same
// options; "" when the float one is made as the double one is (or refused with the same message)
// and its product is bitwise the double one's (where that cannot be asked: passes the check against
// the reference of either matrix), else what is wrong.
inline std::string compare_float_values(const KernelSpec& spec, const Csr& a, const CsrF32& f, const PlanOptions& opt,
                                        const std::string& what, FloatValueCounts& counts) {
  const std::string where = what + " " + describe(spec, opt);
  std::unique_ptr<Plan> pd, pf;
  std::string refused_d, refused_f;
  try {
    pd = make_plan(a, spec.backend, spec.name, opt);
  } catch (const Unsupported& e) {
    refused_d = e.what();
  }
  try {
    pf = make_plan(f, spec.backend, spec.name, opt);
  } catch (const Unsupported& e) {
    refused_f = e.what();
  }
  if (!refused_d.empty() || !refused_f.empty()) {
    if (refused_d != refused_f)
      return where + ": refused differently: double '" + refused_d + "', float '" + refused_f + "'";
    if (const std::string bad = judge_refusal(spec, a, opt.kernel.hack, refused_d); !bad.empty())
      return where + ": " + bad;
    ++counts.refused;
    return "";
  }
  // Plans whose own trial (inner loop, schedule, SpMM shape, the planner's candidates) chose
  // differently compute differently: make the float one again (then the double one) until they
  // agree, a few times.
  for (int attempt = 0; attempt < 10 && configuration(*pd) != configuration(*pf); ++attempt) {
    if (attempt % 2 == 0)
      pf = make_plan(f, spec.backend, spec.name, opt);
    else
      pd = make_plan(a, spec.backend, spec.name, opt);
  }
  // The same configuration stores the same entries; plans whose trials never agreed (auto's
  // candidates, timed) may hold different formats, and are checked against the reference below.
  if (configuration(*pd) == configuration(*pf) && pf->stored_entries != pd->stored_entries)
    return where +
           fmt::format(": stored_entries {} from float values, {} from double", pf->stored_entries, pd->stored_entries);
  if (pf->precision != opt.precision) return where + ": the plan says precision " + to_string(pf->precision);
  // The CSR kernels on the host borrow a float matrix's values: nothing to convert (without values the
  // view cannot say they are float). A scatter kernel's A x makes A^T.
  if (spec.backend != Backend::Cuda && spec.format == "csr" && !spec.baseline && !spec.scatters && f.nnz() > 0 &&
      pf->convert_seconds != 0)
    return where + fmt::format(": a CSR plan over float values converted for {} s (a copy?)", pf->convert_seconds);

  const std::size_t nx = static_cast<std::size_t>(a.cols) * opt.k, ny = static_cast<std::size_t>(a.rows) * opt.k;
  auto xd = make_vector("random:11", nx), xf = xd;
  std::vector<double> yd(ny, std::nan("")), yf(ny, std::nan(""));
  product_in_precision(*pd, opt.precision, xd, yd);
  product_in_precision(*pf, opt.precision, xf, yf);  // xf == xd after: rounded alike for single
  const bool same_config = configuration(*pd) == configuration(*pf);
  if (repeats_bit_identical(spec) && same_config) {
    if (const long long i = first_bit_difference(yd, yf); i >= 0)
      return where + fmt::format(": y[{}] = {:a} from float values, {:a} from double ('{}')", i, yf[i], yd[i],
                                 configuration(*pf));
    ++counts.bitwise;  // the double plan's product is the conformance tests' to check
    return "";
  }
  ++counts.by_reference;
  counts.unlike.push_back(
      where + (same_config ? " (nondeterministic)"
                           : ": '" + configuration(*pd) + "' from double, '" + configuration(*pf) + "' from float"));
  // Not comparable bit for bit: the product passes the check, whether the reference reads the float
  // values (widened exactly) or the double ones.
  const Reference ref_f = reference_product(f, xf, opt.k, opt.layout);
  if (const CheckResult c = check_product(f, ref_f, yf, opt.k, opt.layout, opt.precision); !c.passed)
    return where + ": against the float matrix's reference: " + c.message;
  const Reference ref_d = reference_product(a, xd, opt.k, opt.layout);
  if (const CheckResult c = check_product(a, ref_d, yf, opt.k, opt.layout, opt.precision); !c.passed)
    return where + ": against the double matrix's reference: " + c.message;
  return "";
}

// Variants fixed so that each plan has one way to compute (no trial to disagree on), per kernel, k
// and layout; empty where the kernel takes none or has nothing to choose there.
inline std::vector<std::string> pinned_variants(const KernelSpec& k, int rhs, Layout lay) {
  const bool col_spmm = rhs > 1 && lay == Layout::ColMajor;
  if (k.backend == Backend::Cuda) {
    if (k.name == "csr5")
      return rhs == 1 ? std::vector<std::string>{"single", "two-pass"} : std::vector<std::string>{"two-pass"};
    if ((k.name == "ell" || k.name == "hll") && col_spmm) return {"native", "transpose"};
    return {};
  }
  if (!takes(k, "variant") || k.name == "auto") return {};
  if (k.format == "csr5")
    return rhs == 1 ? std::vector<std::string>{"simd", "lanes"} : std::vector<std::string>{"lanes"};
  const bool schedule =
      std::any_of(k.variants.begin(), k.variants.end(), [](const VariantGroup& g) { return g.name == "schedule"; });
  if (schedule) {  // OpenMP CSR: schedule, inner loop (SpMV), column-major path (SpMM)
    if (rhs == 1) return {"balanced:simd", "dynamic:scalar"};
    return col_spmm ? std::vector<std::string>{"balanced:native", "dynamic:transpose"}
                    : std::vector<std::string>{"balanced"};
  }
  if (rhs == 1) return {"simd", "scalar"};  // ELL, ELL-rowlen, HLL, CSR of a fixed schedule
  return col_spmm ? std::vector<std::string>{"native", "transpose"} : std::vector<std::string>{};
}

// The edge cases (empty rows, one dominant row, 0 rows, nnz = 0, ...) and two shared matrices:
// rectangular well1033 and Journals with dense rows (what is found of them: the caller checks).
inline std::vector<std::pair<std::string, Csr>> float_value_cases() {
  auto v = edge_cases();
  for (const auto& [name, file] : shared_matrix_files())
    if (name == "well1033" || name == "Journals") v.emplace_back(name, io::load_csr(file));
  return v;
}

// Every kernel of the backends under test in single and mixed precision (those it lists), on the
// given matrices at k = 1 and 3 (both layouts where it does SpMM), with its default options (its
// own trials) and each pinned variant. Auto also without its trial (the model's choice). OpenMP
// kernels run on `omp_threads`. Without `trials`: only the pinned variants where a kernel has some,
// and auto without its trial (a trial times hundreds of tiny products: slow where the cores are
// shared).
inline void every_kernel_from_float_values(const std::vector<std::pair<std::string, Csr>>& mats, int omp_threads,
                                           FloatValueCounts& counts, bool trials = true) {
  for (const auto& [name, a] : mats) {
    const CsrF32 f = to_float(a);
    for (const KernelSpec* spec : tested_kernels())
      for (const Precision p : {Precision::Single, Precision::Mixed}) {
        if (!supports(*spec, p)) continue;
        for (const int k : {1, 3})
          for (const Layout lay : {Layout::RowMajor, Layout::ColMajor}) {
            if ((k == 1 && lay == Layout::ColMajor) || (k > 1 && !spec->spmm)) continue;
            PlanOptions base;
            base.threads = spec->backend == Backend::Omp ? omp_threads : 1;
            base.k = k;
            base.layout = lay;
            base.precision = p;
            const std::vector<std::string> pinned = pinned_variants(*spec, k, lay);
            std::vector<PlanOptions> opts;
            if (trials || (pinned.empty() && spec->name != "auto")) opts.push_back(base);
            for (const std::string& v : pinned) {
              opts.push_back(base);
              opts.back().kernel.variant = v;
            }
            if (spec->name == "auto") {
              opts.push_back(base);
              opts.back().trial = false;
            }
            for (const PlanOptions& o : opts) EXPECT_EQ(compare_float_values(*spec, a, f, o, name, counts), "");
          }
      }
  }
}

// Double plans refuse a float matrix (every kernel: each computes in double), saying what to do.
inline int double_plans_refuse_float_values(const CsrF32& f) {
  int refusals = 0;
  for (const KernelSpec* spec : tested_kernels()) {
    PlanOptions opt;
    opt.threads = 1;
    try {
      make_plan(f, spec->backend, spec->name, opt);
      ADD_FAILURE() << describe(*spec, opt) << ": a double plan accepted float values";
    } catch (const Unsupported& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("the matrix's values are in float: plan it in single or mixed precision, or widen it with "
                         "to_double"),
                std::string::npos)
          << describe(*spec, opt) << ": " << msg;
      EXPECT_NE(msg.find("'" + spec->name + "'"), std::string::npos) << msg;
      ++refusals;
    }
  }
  return refusals;
}

}  // namespace spmv::test
