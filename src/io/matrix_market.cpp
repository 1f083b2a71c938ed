// PLACEHOLDER until the reader lands (issue 2, I/O helper).
#include <spmv/io.hpp>

namespace spmv::io {
Coo read_matrix(const std::string& path, const ReadOptions&) { throw Error(path + ": reader not implemented yet"); }
Coo parse_matrix_market(std::string_view, const std::string& name, const ReadOptions&) { throw Error(name + ": reader not implemented yet"); }
void write_matrix_market(const std::string& path, const Csr&) { throw Error(path + ": writer not implemented yet"); }
std::vector<double> read_dense_vector(const std::string& path) { throw Error(path + ": not implemented yet"); }
void write_dense_vector(const std::string& path, const std::vector<double>&) { throw Error(path + ": not implemented yet"); }
void write_binary(const std::string& path, const Csr&) { throw Error(path + ": not implemented yet"); }
Csr read_binary(const std::string& path) { throw Error(path + ": not implemented yet"); }
bool is_binary_cache(const std::string&) { return false; }
Csr load_csr(const std::string& path, const ReadOptions& opt) { return coo_to_csr(read_matrix(path, opt)); }
}  // namespace spmv::io
