#include <spmv/params.hpp>
#include <spmv/plan.hpp>

#include <fmt/format.h>

#include "commands.hpp"

namespace spmv::cli {

void add_kernels(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("kernels", "List the kernels built into this binary");
  cmd->callback([&action] {
    action = [] {
      for (const auto& k : kernels()) {
        // The precisions beyond double it computes in (run --precision, bench --precisions).
        std::string extra;
        for (const Precision p : {Precision::Single, Precision::Mixed})
          if (supports(k, p)) extra += fmt::format(" [{}]", to_string(p));
        fmt::print("{:<7} {:<18} {:<11} {}{}{}{}{}\n", to_string(k.backend), k.name, k.format, k.description,
                   k.spmm ? " [spmm]" : "", extra, k.baseline ? " [baseline]" : "",
                   k.params.empty() ? "" : fmt::format(" [settings: {}]", fmt::join(k.params, ", ")));
        if (!k.variants.empty()) fmt::print("{:<38} variant words: {}\n", "", variant_words(k.variants));
      }
      // The settings: run takes a value of each, bench a comma list it sweeps; a kernel ignores
      // those it does not take.
      fmt::print("\nsettings (run --name VALUE, bench --name V1,V2,...; Python Plan(name=VALUE)):\n");
      for (const ParamSpec& p : kernel_params()) {
        if (p.kind != ParamSpec::Kind::Integer) continue;
        fmt::print("  {:<17} {}: {}\n", p.flag(), p.help, p.range());
      }
      fmt::print("  {:<17} {}\n", "--variant", find_param("variant")->help);
      fmt::print("  {:<17} {}\n", "",
                 "\"auto\", or words joined by ':' in any order, at most one of each group; a "
                 "group not given is chosen per matrix");
      return 0;
    };
  });
}

}  // namespace spmv::cli
