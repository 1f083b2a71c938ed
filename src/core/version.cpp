#include <spmv/version.hpp>

namespace spmv {

const char* version() { return SPMV_VERSION; }
const char* git_commit() { return SPMV_GIT_COMMIT; }

}  // namespace spmv
