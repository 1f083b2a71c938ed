// The kernels' settings described once (spmv/params.hpp): every kernel names described settings,
// make_plan refuses a value outside the range of a setting the kernel takes and ignores those it
// does not take, and the descriptions read and write the PlanOptions fields they name.
#include <gtest/gtest.h>
#include <spmv/spmv.hpp>

#include <set>
#include <string>

#include "core/register.hpp"
#include "test_util.hpp"

namespace spmv {
namespace {

Csr small_matrix() { return coo_to_csr(test::random_coo(40, 40, 0.1, 7)); }

TEST(Params, EveryKernelTakesDescribedSettingsOnly) {
  std::set<std::string> described;
  for (const ParamSpec& p : kernel_params()) {
    EXPECT_TRUE(described.insert(p.name).second) << "described twice: " << p.name;
    EXPECT_FALSE(p.help.empty()) << p.name;
    EXPECT_EQ(find_param(p.name), &p);
    if (p.kind == ParamSpec::Kind::Integer) {
      ASSERT_TRUE(p.get && p.set) << p.name;
      for (const long long v : p.test_values) EXPECT_EQ(p.invalid(v), "") << p.name << " " << v;
      for (const long long v : p.sweep) EXPECT_EQ(p.invalid(v), "") << p.name << " " << v;
    }
  }
  EXPECT_EQ(find_param("no_such_setting"), nullptr);
  for (const KernelSpec& k : kernels())
    for (const std::string& name : k.params) EXPECT_TRUE(described.count(name)) << k.name << ": " << name;
  // A kernel naming a setting nobody described is a programming error, refused at registration.
  EXPECT_THROW(add_kernel({.name = "bogus", .backend = Backend::Serial, .params = {"blocksize"}}), std::logic_error);
}

TEST(Params, AccessorsReadAndWriteTheirField) {
  PlanOptions o;
  find_param("block_size")->set(o, 512);
  find_param("hack")->set(o, 7);
  find_param("subwarp")->set(o, 8);
  find_param("nz_per_chunk")->set(o, 1LL << 33);  // a 64-bit field keeps a value past 32 bits
  EXPECT_EQ(o.kernel.block_size, 512);
  EXPECT_EQ(o.kernel.hack, 7);
  EXPECT_EQ(o.kernel.subwarp, 8);
  EXPECT_EQ(o.kernel.nz_per_chunk, 1LL << 33);
  EXPECT_EQ(find_param("nz_per_chunk")->get(o), 1LL << 33);
  EXPECT_EQ(find_param("threads")->get(PlanOptions{.threads = 3}), 3);
}

TEST(Params, RangesSayWhatIsValid) {
  const ParamSpec& bs = *find_param("block_size");
  EXPECT_EQ(bs.invalid(0), "");  // the kernel's own
  EXPECT_EQ(bs.invalid(64), "");
  EXPECT_EQ(bs.invalid(100), "must be a multiple of 32 in [32, 1024], or 0 (the kernel's own)");
  EXPECT_NE(bs.invalid(2048), "");
  const ParamSpec& sw = *find_param("subwarp");
  EXPECT_EQ(sw.invalid(1), "");
  EXPECT_EQ(sw.invalid(3), "must be a power of two in [1, 32], or 0 (from the mean row length)");
  EXPECT_NE(sw.invalid(64), "");
  const ParamSpec& hack = *find_param("hack");
  EXPECT_NE(hack.invalid(0), "");  // no default to fall back to: a hack holds rows
  EXPECT_NE(hack.invalid(-1), "");
  EXPECT_EQ(hack.flag(), "--hack");
  EXPECT_EQ(find_param("nz_per_chunk")->flag(), "--nz-per-chunk");
}

TEST(Params, MakePlanChecksTheSettingsTheKernelTakes) {
  const Csr a = small_matrix();
  // HLL takes hack: 0 is refused naming the kernel and the setting.
  try {
    make_plan(a, Backend::Omp, "hll", PlanOptions{.threads = 1, .kernel = {.hack = 0}});
    ADD_FAILURE() << "hack 0 accepted";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("kernel 'hll' (omp): hack 0 must be an integer in [1, "), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(make_plan(a, Backend::Omp, "csr", PlanOptions{.threads = 1, .kernel = {.nz_per_chunk = -5}}),
               Unsupported);
  // CSR on the CPU takes no hack, no block size: they are ignored, whatever their value.
  auto plan = make_plan(a, Backend::Omp, "csr", PlanOptions{.threads = 1, .kernel = {.block_size = 7, .hack = 0}});
  std::vector<double> x(40, 1.0);
  EXPECT_TRUE(checked_product(*plan, a, x).check.passed);
}

// The one grammar of variants: words of the kernel's groups joined by ':' in any order.
TEST(Params, VariantWordsInAnyOrderAtMostOneOfEachGroup) {
  const std::vector<VariantGroup> g = {{"schedule", {"dynamic", "balanced"}}, {"inner", {"simd", "scalar"}}};
  const VariantChoice c = parse_variant("k", g, "scalar:dynamic");
  EXPECT_EQ(c["schedule"], "dynamic");
  EXPECT_EQ(c["inner"], "scalar");
  EXPECT_EQ(c.text(), "dynamic:scalar");  // in the groups' order
  for (const char* none : {"auto", "", "auto:auto"}) {
    const VariantChoice n = parse_variant("k", g, none);
    EXPECT_FALSE(n.given("schedule") || n.given("inner")) << none;
    EXPECT_EQ(n.text(), "auto");
  }
  EXPECT_EQ(parse_variant("k", g, "balanced")["inner"], "");
  EXPECT_EQ(test::error_of([&] { parse_variant("k", g, "dynamic:fast"); }),
            "kernel 'k': no variant word 'fast' in 'dynamic:fast' (its words: schedule dynamic|balanced, inner "
            "simd|scalar, joined by ':')");
  EXPECT_NE(test::error_of([&] { parse_variant("k", g, "dynamic:balanced"); }).find("gives schedule twice"),
            std::string::npos);
  EXPECT_THROW(parse_variant("k", {}, "simd"), Unsupported);  // a kernel without variants has no words
  // A kernel names its variant by its words, never as a bare setting.
  EXPECT_THROW(add_kernel({.name = "bogus", .backend = Backend::Serial, .params = {"variant"}}), std::logic_error);
}

// Every word of every CPU kernel's variant, alone, plans and computes the product; a word of
// another kernel is refused by make_plan before the kernel is made.
TEST(Params, EveryVariantWordOfTheCpuKernelsComputesTheProduct) {
  const Csr a = small_matrix();
  std::vector<double> x(40, 1.5);
  int runs = 0;
  for (const KernelSpec& k : kernels()) {
    if (k.backend == Backend::Cuda || k.variants.empty()) continue;
    EXPECT_TRUE(takes(k, "variant")) << k.name;
    for (const VariantGroup& g : k.variants)
      for (const std::string& word : g.words) {
        auto plan = make_plan(a, k.backend, k.name, PlanOptions{.threads = 2, .kernel = {.variant = word}});
        EXPECT_TRUE(checked_product(*plan, a, x).check.passed) << k.name << " " << word;
        ++runs;
      }
    EXPECT_THROW(make_plan(a, k.backend, k.name, PlanOptions{.threads = 2, .kernel = {.variant = "c4:w8"}}),
                 Unsupported)
        << k.name;
  }
  EXPECT_GE(runs, 25);
}

}  // namespace
}  // namespace spmv
