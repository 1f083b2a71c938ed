#pragma once
// Internal to the CUDA backend: the plan factories the planner chooses among. A factory given a
// device CSR (upload_csr in csr_device.cuh) shares it instead of uploading its own; ELL, HLL and
// CSR5 convert from it on the device.
#include <spmv/plan.hpp>
#include <spmv/planner.hpp>

#include <memory>
#include <string>

namespace spmv::cuda {

struct DeviceCsr;
using SharedDeviceCsr = std::shared_ptr<DeviceCsr>;

std::unique_ptr<Plan> make_csr_scalar(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev = nullptr);
std::unique_ptr<Plan> make_csr_vector(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev = nullptr);
std::unique_ptr<Plan> make_csr_adaptive(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev = nullptr);
std::unique_ptr<Plan> make_csr_merge(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev = nullptr);
/// The CSR SpMM kernel's variant words (the "csr" kernel's for k > 1).
const std::vector<VariantGroup>& csr_spmm_variants();
std::unique_ptr<Plan> make_csr_spmm(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev = nullptr);
std::unique_ptr<Plan> make_ell(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev = nullptr);
std::unique_ptr<Plan> make_hll(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev = nullptr);
std::unique_ptr<Plan> make_csr5(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev = nullptr);

// The planner's way of making a candidate: a plan of `kernel` converting from (or running on) one
// device upload of `a` shared by every plan made with the same `dev`, uploaded on the first call
// (its seconds added to *upload_s). nullptr for a kernel without such a factory (cuSPARSE's).
std::unique_ptr<Plan> make_sharing_upload(const CsrView& a, const std::string& kernel, const PlanOptions& opt,
                                          SharedDeviceCsr& dev, double* upload_s = nullptr);

// Sub-warp width CSR-vector uses for this matrix when the options leave it open.
int choose_subwarp(const CsrView& a);

}  // namespace spmv::cuda
