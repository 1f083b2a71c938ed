#pragma once
// The in-place half of coo_to_csr(Coo&&), callable by itself (tests run it on matrices small
// enough for the copying half that coo_to_csr would choose).
#include <spmv/matrix.hpp>

namespace spmv::detail {

// CSR in the COO's own arrays: rows counted, entries placed by row in place (skipped when
// `in_order`: rows already non-decreasing), rows sorted and duplicates summed. `coo` is left empty.
template <class V>
BasicCsr<V> coo_to_csr_in_place(BasicCoo<V>&& coo, bool in_order);

}  // namespace spmv::detail
