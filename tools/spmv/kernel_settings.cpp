// The kernels' settings as command-line options, made from their descriptions (spmv/params.hpp).
#include <spmv/params.hpp>

#include <fmt/format.h>

#include "commands.hpp"

namespace spmv::cli {

namespace {

// bench's default sweep of a setting, in words, for its help.
std::string default_sweep_text(const ParamSpec& p) {
  if (p.name == "threads") return "1, 2, 4, ... up to 2x the cores";
  if (!p.sweep.empty()) return fmt::format("{}", fmt::join(p.sweep, ","));
  return fmt::format("{}", p.get(PlanOptions{}));
}

}  // namespace

void KernelSettings::add_options(CLI::App* cmd, bool lists) {
  for (const ParamSpec& p : kernel_params()) {
    if (p.kind != ParamSpec::Kind::Integer) continue;
    const std::string taking = kernels_taking(p.name);
    std::string help = p.full_help() + (taking.empty() ? "" : "; taken by " + taking);
    if (lists) help += fmt::format("; a comma list, swept (default {})", default_sweep_text(p));
    const std::string flag = p.flag();
    const CLI::Validator check =
        number_check<long long>([&p](long long n) { return p.invalid(n).empty(); }, p.range(), "");
    std::vector<long long>& values = given[p.name];
    CLI::Option* opt = cmd->add_option(flag, values, help)->check(check);
    if (lists) {
      opt->delimiter(',');
    } else {
      opt->expected(1);
      opt->default_str(std::to_string(p.get(PlanOptions{})));
    }
  }
  cmd->add_flag("--csr5-atomic", csr5_atomic,
                "CSR5 on CUDA: the paper's variant, carries added with atomics (not deterministic; the default is the "
                "single-pass kernel)");
}

long long KernelSettings::value(const std::string& name, long long fallback) const {
  const auto it = given.find(name);
  return it == given.end() || it->second.empty() ? fallback : it->second.back();
}

void KernelSettings::apply(PlanOptions& o) const {
  for (const ParamSpec& p : kernel_params())
    if (p.set && p.kind == ParamSpec::Kind::Integer) p.set(o, value(p.name, p.get(o)));
  apply_variant(o);
}

void KernelSettings::apply_variant(PlanOptions& o) const {
  if (csr5_atomic) {  // the CUDA CSR5 kernel's variant "atomic", which needs deterministic off
    o.kernel.variant = "atomic";
    o.kernel.deterministic = false;
  }
}

}  // namespace spmv::cli
