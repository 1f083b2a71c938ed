#pragma once
// Internal: where the shared folder's files are (../shared beside the checkout).
#include <string>

namespace spmv {

// $env_var when set, else the first of ../shared/REL beside the source tree (a git worktree sits
// one level deeper) and ../shared/REL from the working folder that exists (as a folder when
// `folder`); none: the first candidate.
std::string shared_path(const char* env_var, const std::string& rel, bool folder);

}  // namespace spmv
