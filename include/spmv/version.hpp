#pragma once
/// @file
/// The library's version (CMake's project version) and the git commit it was built from.

namespace spmv {

const char* version();     ///< "0.1.0"
const char* git_commit();  ///< short hash, "unknown" outside a git checkout

}  // namespace spmv
