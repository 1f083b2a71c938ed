#pragma once
// Pass 2: parsing the chunks' entry lines straight into the preallocated COO arrays.
#include <string>
#include <vector>

#include "io/mm_chunks.hpp"
#include "io/mm_header.hpp"

namespace spmv::io::detail {

// Where pass 2 writes: the COO arrays, sized for the stored entries; values in V (double or float).
template <class V>
struct CooArrays {
  index_t* row;
  index_t* col;
  V* val;
  V* imag;        // null unless complex
  i64 shift = 0;  // entries of the file summed into earlier ones (mm_repeats): entry k goes to k - shift
};

// Parses the chunks, `threads` at a time, entry k of the file into index k - shift of `out`, at most
// `limit` entries (later ones were counted by pass 1 and are reported by the caller). Each chunk
// records its first error with the exact line; the earliest chunk's error is then thrown as
// ParseError naming `name`, so messages equal a serial reader's.
template <class V>
void parse_chunks(const char* base, const MmHeader& h, std::vector<Chunk>& chunks, i64 limit, int threads,
                  const CooArrays<V>& out, const std::string& name);

}  // namespace spmv::io::detail
