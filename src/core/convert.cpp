// COO -> CSR in O(nnz + rows), copying (a const COO) or in the COO's own arrays (an rvalue), and back.
#include <spmv/matrix.hpp>

#include "core/convert.hpp"
#include "core/float_range.hpp"
#include "core/values.hpp"
#include <spmv/plan.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <numeric>
#include <omp.h>
#include <utility>

namespace spmv {

namespace {

// Below this many entries threads cost more than they save.
constexpr offset_t kParallelThreshold = 1 << 20;

// Entries bucketed by row in two levels when placed in place: rows grouped into this many buckets
// of about equal entries (one pass with as many write heads, cache-friendly), then each bucket's
// rows in parallel.
constexpr int kBuckets = 256;
// The most entries of a bucket placed through a copy (24 bytes each: 48 MiB a thread at most).
constexpr offset_t kBucketCopy = offset_t{1} << 21;

// Rows up to this long are sorted in place by insertion (no buffers); longer ones through a sorted
// permutation.
constexpr offset_t kInsertionRow = 64;

// Sorts each row [start[r], start[r+1]) by column, stably (equal columns keep their order: the
// file's, where the placement by row was stable); returns whether any column repeats within a row.
// A row already in order costs one look; equal neighbours need no sorting (a file's duplicates).
template <class V>
bool sort_rows(const Array<offset_t>& start, index_t rows, index_t* col, V* val, V* imag, bool parallel) {
  bool repeats = false;
#pragma omp parallel if (parallel) reduction(|| : repeats)
  {
    std::vector<offset_t> perm;
    std::vector<index_t> tc;
    std::vector<V> tv, ti;
#pragma omp for schedule(dynamic, 256)
    for (index_t r = 0; r < rows; ++r) {
      const offset_t b = start[r], e = start[r + 1];
      const offset_t m = e - b;
      bool ordered = true, equal = false;
      for (offset_t p = b + 1; p < e && ordered; ++p) {
        ordered = col[p] >= col[p - 1];
        equal |= col[p] == col[p - 1];
      }
      if (ordered) {
        repeats |= equal;
        continue;
      }
      if (m <= kInsertionRow) {
        for (offset_t p = b + 1; p < e; ++p) {
          const index_t c = col[p];
          const V v = val[p], im = imag ? imag[p] : V{0};
          offset_t q = p;
          for (; q > b && col[q - 1] > c; --q) {
            col[q] = col[q - 1];
            val[q] = val[q - 1];
            if (imag) imag[q] = imag[q - 1];
          }
          col[q] = c;
          val[q] = v;
          if (imag) imag[q] = im;
        }
      } else {
        perm.resize(m);
        std::iota(perm.begin(), perm.end(), offset_t{0});
        std::stable_sort(perm.begin(), perm.end(), [&](offset_t x, offset_t y) { return col[b + x] < col[b + y]; });
        tc.resize(m);
        tv.resize(m);
        ti.resize(imag ? m : 0);
        for (offset_t q = 0; q < m; ++q) {
          tc[q] = col[b + perm[q]];
          tv[q] = val[b + perm[q]];
          if (imag) ti[q] = imag[b + perm[q]];
        }
        std::copy(tc.begin(), tc.end(), col + b);
        std::copy(tv.begin(), tv.end(), val + b);
        if (imag) std::copy(ti.begin(), ti.end(), imag + b);
      }
      for (offset_t p = b + 1; p < e && !repeats; ++p) repeats = col[p] == col[p - 1];
    }
  }
  return repeats;
}

// Sums the now adjacent duplicates of each sorted row into its first (explicit zeros stay stored
// entries), compacting the row at its start; returns the new row lengths. Float values are summed
// in double and rounded once; a sum that rounds to infinity from finite terms is recorded in
// `overflow` (the first such position), the caller refuses the matrix.
template <class V>
std::vector<offset_t> sum_duplicates(const Array<offset_t>& start, index_t rows, index_t* col, V* val, V* imag,
                                     bool parallel, offset_t* overflow = nullptr) {
  std::vector<offset_t> len(static_cast<std::size_t>(rows), 0);
  offset_t first_overflow = std::numeric_limits<offset_t>::max();
#pragma omp parallel for schedule(dynamic, 256) if (parallel) reduction(min : first_overflow)
  for (index_t r = 0; r < rows; ++r) {
    const offset_t b = start[r], e = start[r + 1];
    if (e == b) continue;
    offset_t w = b;
    double sum = val[b], isum = imag ? imag[b] : 0.0;
    const auto flush = [&] {
      val[w] = static_cast<V>(sum);
      if (imag) imag[w] = static_cast<V>(isum);
      if constexpr (!std::is_same_v<V, double>)
        if (detail::beyond_float(sum)) first_overflow = std::min(first_overflow, w);
    };
    for (offset_t p = b + 1; p < e; ++p) {
      if (col[p] == col[w]) {
        sum += val[p];
        if (imag) isum += imag[p];
      } else {
        flush();
        ++w;
        col[w] = col[p];
        sum = val[p];
        isum = imag ? imag[p] : 0.0;
      }
    }
    flush();
    len[r] = w - b + 1;
  }
  if (overflow) *overflow = first_overflow;
  return len;
}

Array<offset_t> prefix(const std::vector<offset_t>& len) {
  Array<offset_t> ptr(len.size() + 1, 0);
  for (std::size_t r = 0; r < len.size(); ++r) ptr[r + 1] = ptr[r] + len[r];
  return ptr;
}

// Entries of the COO's arrays, moved together while they are placed by row.
template <class V>
struct Entries {
  index_t* row;
  index_t* col;
  V* val;
  V* imag;  // null unless complex
  struct One {
    index_t r, c;
    V v, i;
  };
  One take(offset_t p) const { return {row[p], col[p], val[p], imag ? imag[p] : V{0}}; }
  void put(offset_t p, const One& e) const {
    row[p] = e.r;
    col[p] = e.c;
    val[p] = e.v;
    if (imag) imag[p] = e.i;
  }
};

// Places the entries of [begin, end) into their groups in place (American flag sort: each entry
// moves once, along cycles): group(e) names an entry's group, head[g] is where group g's next
// entry goes (its start on entry) and end[g] where it ends. Deterministic; not stable.
template <class V, class Group>
void place(const Entries<V>& a, std::vector<offset_t>& head, const std::vector<offset_t>& end, Group group) {
  const std::size_t groups = end.size();
  for (std::size_t g = 0; g < groups; ++g) {
    while (head[g] < end[g]) {
      const offset_t p = head[g];
      std::size_t t = group(a.row[p]);
      if (t == g) {
        ++head[g];
        continue;
      }
      typename Entries<V>::One carried = a.take(p);
      while (t != g) {  // swap the carried entry into its group's next slot, carry what was there
        const offset_t q = head[t]++;
        typename Entries<V>::One next = a.take(q);
        a.put(q, carried);
        carried = next;
        t = group(carried.r);
      }
      a.put(p, carried);
      ++head[g];
    }
  }
}

// Puts the entries in row order in place: row buckets of about equal entries first, then the rows
// within each bucket, buckets in parallel. start: rows + 1 row starts (from the counts).
template <class V>
void place_by_row(const Entries<V>& a, index_t rows, const Array<offset_t>& start, bool parallel) {
  const int nb = static_cast<int>(std::min<offset_t>(kBuckets, std::max<offset_t>(1, rows)));
  const std::vector<index_t> first_row =
      detail::rows_of_equal_entries(start, nb);  // bucket b: rows [first_row[b], first_row[b+1])
  std::vector<std::uint8_t> bucket(static_cast<std::size_t>(rows));
  for (int b = 0; b < nb; ++b)
    std::fill(bucket.begin() + first_row[b], bucket.begin() + first_row[b + 1], static_cast<std::uint8_t>(b));
  std::vector<offset_t> head(nb), end(nb);
  for (int b = 0; b < nb; ++b) {
    head[b] = start[first_row[b]];
    end[b] = start[first_row[b + 1]];
  }
  place(a, head, end, [&](index_t r) { return static_cast<std::size_t>(bucket[r]); });
  // Within a bucket: a stable counting placement through a copy of the bucket (a bucket of at most
  // kBucketCopy entries, within a reader's scratch; its stores are independent, unlike the cycles'
  // chain of dependent swaps), or the cycles in place for a larger one.
#pragma omp parallel if (parallel)
  {
    std::vector<typename Entries<V>::One> copy;
#pragma omp for schedule(dynamic, 1)
    for (int b = 0; b < nb; ++b) {
      const index_t r0 = first_row[b], r1 = first_row[b + 1];
      std::vector<offset_t> rhead(start.begin() + r0, start.begin() + r1);
      const offset_t lo = start[r0], hi = start[r1];
      if (hi - lo <= kBucketCopy) {
        copy.resize(static_cast<std::size_t>(hi - lo));
        for (offset_t p = lo; p < hi; ++p) copy[p - lo] = a.take(p);
        for (const auto& e : copy) a.put(rhead[e.r - r0]++, e);
      } else {
        const std::vector<offset_t> rend(start.begin() + r0 + 1, start.begin() + r1 + 1);
        place(a, rhead, rend, [r0](index_t r) { return static_cast<std::size_t>(r - r0); });
      }
    }
  }
}

// Summing duplicates overflowed float (sum_duplicates' `overflow`: a position in the rows before
// compaction; start: the rows' starts there, col: the columns there).
[[noreturn]] void refuse_sum_overflow(const Array<offset_t>& start, const index_t* col, offset_t at) {
  const auto row = std::upper_bound(start.begin(), start.end(), at) - start.begin() - 1;
  throw Unsupported("the duplicate entries at row " + std::to_string(row + 1) + ", column " +
                    std::to_string(col[at] + 1) +
                    " (1-based) sum beyond single precision's range; read the matrix in double precision");
}

template <class V>
BasicCsr<V> copying_coo_to_csr(const BasicCoo<V>& coo) {
  BasicCsr<V> csr;
  csr.rows = coo.rows;
  csr.cols = coo.cols;
  csr.field = coo.field;
  csr.symmetry = coo.symmetry;
  const offset_t n = coo.nnz();
  const bool cplx = coo.is_complex();

  // Counting sort by row (stable, so equal (row,col) keep file order before summing).
  Array<offset_t> start(static_cast<std::size_t>(coo.rows) + 1, 0);
  for (offset_t e = 0; e < n; ++e) ++start[coo.row[e] + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  Array<index_t> col;  // every position is written by the placement below
  Array<V> val;
  Array<V> imag;
  col.resize_for_overwrite(n);
  val.resize_for_overwrite(n);
  imag.resize_for_overwrite(cplx ? n : 0);
  {
    std::vector<offset_t> next(start.begin(), start.end() - 1);
    for (offset_t e = 0; e < n; ++e) {
      const offset_t p = next[coo.row[e]]++;
      col[p] = coo.col[e];
      val[p] = coo.val[e];
      if (cplx) imag[p] = coo.imag[e];
    }
  }

  const bool parallel = n >= kParallelThreshold;
  V* imag_p = cplx ? imag.data() : nullptr;
  if (!sort_rows(start, coo.rows, col.data(), val.data(), imag_p, parallel)) {
    csr.row_ptr = std::move(start);
    csr.col = std::move(col);
    csr.val = std::move(val);
    csr.imag = std::move(imag);
    return csr;
  }
  offset_t overflow = 0;
  const std::vector<offset_t> len =
      sum_duplicates(start, coo.rows, col.data(), val.data(), imag_p, parallel, &overflow);
  csr.row_ptr = prefix(len);
  const offset_t out_n = csr.row_ptr.back();
  if (overflow != std::numeric_limits<offset_t>::max()) refuse_sum_overflow(start, col.data(), overflow);
  if (out_n == n) {
    csr.col = std::move(col);
    csr.val = std::move(val);
    csr.imag = std::move(imag);
  } else {
    csr.col.resize_for_overwrite(out_n);
    csr.val.resize_for_overwrite(out_n);
    csr.imag.resize_for_overwrite(cplx ? out_n : 0);
#pragma omp parallel for schedule(dynamic, 256) if (parallel)
    for (index_t r = 0; r < coo.rows; ++r) {
      std::copy_n(col.begin() + start[r], len[r], csr.col.begin() + csr.row_ptr[r]);
      std::copy_n(val.begin() + start[r], len[r], csr.val.begin() + csr.row_ptr[r]);
      if (cplx) std::copy_n(imag.begin() + start[r], len[r], csr.imag.begin() + csr.row_ptr[r]);
    }
  }
  return csr;
}

}  // namespace

Csr coo_to_csr(const Coo& coo) { return copying_coo_to_csr(coo); }
CsrF32 coo_to_csr(const CooF32& coo) { return copying_coo_to_csr(coo); }
Csr coo_to_csr(Coo&& coo) { return detail::moving_coo_to_csr(std::move(coo), omp_get_max_threads()); }
CsrF32 coo_to_csr(CooF32&& coo) { return detail::moving_coo_to_csr(std::move(coo), omp_get_max_threads()); }

namespace detail {

template <class V>
BasicCsr<V> moving_coo_to_csr(BasicCoo<V>&& coo, int threads) {
  // The conversion's parallel regions run on `threads` (OpenMP's setting for this thread, restored
  // on the way out): their per-thread scratch is the caller's too.
  struct OmpThreads {
    int saved = omp_get_max_threads();
    explicit OmpThreads(int t) { omp_set_num_threads(std::max(1, t)); }
    ~OmpThreads() { omp_set_num_threads(saved); }
  } const scope(threads);
  const offset_t n = coo.nnz();
  const bool parallel = n >= kParallelThreshold;
  // Entries already in row order (a file written by rows) need no moving: in place, always. Else,
  // a second copy of the entries within the scratch `threads` may take (64 MiB a thread): the
  // copying conversion, stable and faster on unsorted entries (its rows come out sorted where the
  // file's order was by column, as SuiteSparse's is); in place beyond it.
  bool in_order = true;
#pragma omp parallel for schedule(static) reduction(&& : in_order) if (parallel)
  for (offset_t e = 1; e < n; ++e)
    if (coo.row[e] < coo.row[e - 1]) in_order = false;
  constexpr double vb = sizeof(V);
  const double copy_bytes =
      (4.0 + vb + (coo.is_complex() ? vb : 0.0)) * static_cast<double>(n) + 16.0 * (static_cast<double>(coo.rows) + 1);
  if (!in_order && copy_bytes <= 64.0 * 1024 * 1024 * std::max(1, threads)) {
    BasicCsr<V> out = copying_coo_to_csr(static_cast<const BasicCoo<V>&>(coo));
    coo = BasicCoo<V>{};
    return out;
  }
  return coo_to_csr_in_place(std::move(coo), in_order);
}

template <class V>
BasicCsr<V> coo_to_csr_in_place(BasicCoo<V>&& coo, bool in_order) {
  const offset_t n = coo.nnz();
  const index_t rows = coo.rows;
  const bool cplx = coo.is_complex();
  const bool parallel = n >= kParallelThreshold;
  const Entries<V> a{coo.row.data(), coo.col.data(), coo.val.data(), cplx ? coo.imag.data() : nullptr};

  // Row counts, then their prefix sums: a count per thread where the threads' counts together are
  // small against the entries, else atomic increments (exact whatever the order either way).
  Array<offset_t> start(static_cast<std::size_t>(rows) + 1, 0);
  const int threads = parallel ? omp_get_max_threads() : 1;
  if (threads > 1 && static_cast<offset_t>(rows) * threads <= n / 2) {
    std::vector<std::vector<offset_t>> counts(threads);
#pragma omp parallel num_threads(threads)
    {
      std::vector<offset_t>& c = counts[omp_get_thread_num()];
      c.assign(static_cast<std::size_t>(rows) + 1, 0);
#pragma omp for schedule(static)
      for (offset_t e = 0; e < n; ++e) ++c[a.row[e] + 1];
#pragma omp for schedule(static)
      for (index_t r = 0; r <= rows; ++r)
        for (int t = 0; t < threads; ++t) start[r] += counts[t][r];
    }
  } else if (threads > 1) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (offset_t e = 0; e < n; ++e)
      std::atomic_ref<offset_t>(start[a.row[e] + 1]).fetch_add(1, std::memory_order_relaxed);
  } else {
    for (offset_t e = 0; e < n; ++e) ++start[a.row[e] + 1];
  }
  std::partial_sum(start.begin(), start.end(), start.begin());
  if (!in_order) place_by_row(a, rows, start, parallel);
  Array<index_t>().swap(coo.row);  // the row indices are done with
  return csr_from_rows(std::move(start), coo.cols, coo.field, coo.symmetry, std::move(coo.col), std::move(coo.val),
                       std::move(coo.imag));
}

std::vector<index_t> rows_of_equal_entries(const Array<offset_t>& start, int parts) {
  const auto rows = static_cast<index_t>(start.size() - 1);
  const offset_t n = start[rows];
  std::vector<index_t> bound(static_cast<std::size_t>(parts) + 1, rows);
  bound[0] = 0;
  for (int p = 1; p < parts; ++p) {
    const offset_t target = n / parts * p;
    bound[p] = static_cast<index_t>(std::lower_bound(start.begin(), start.end(), target) - start.begin());
    bound[p] = std::clamp(bound[p], bound[p - 1], rows);
  }
  return bound;
}

template <class V>
BasicCsr<V> csr_from_rows(Array<offset_t>&& start, index_t cols, Field field, Symmetry symmetry, Array<index_t>&& col,
                          Array<V>&& val, Array<V>&& imag) {
  const auto rows = static_cast<index_t>(start.size() - 1);
  const bool cplx = field == Field::Complex;
  const bool parallel = start.back() >= kParallelThreshold;
  V* imag_p = cplx ? imag.data() : nullptr;
  BasicCsr<V> csr;
  csr.rows = rows;
  csr.cols = cols;
  csr.field = field;
  csr.symmetry = symmetry;
  if (!sort_rows(start, rows, col.data(), val.data(), imag_p, parallel)) {
    csr.row_ptr = std::move(start);  // no duplicates: the rows stay where they are
  } else {
    offset_t overflow = 0;
    const std::vector<offset_t> len = sum_duplicates(start, rows, col.data(), val.data(), imag_p, parallel, &overflow);
    csr.row_ptr = prefix(len);
    if (overflow != std::numeric_limits<offset_t>::max()) refuse_sum_overflow(start, col.data(), overflow);
    for (index_t r = 0; r < rows; ++r) {  // close the gaps, rows in order (each moves left)
      std::copy_n(col.begin() + start[r], len[r], col.begin() + csr.row_ptr[r]);
      std::copy_n(val.begin() + start[r], len[r], val.begin() + csr.row_ptr[r]);
      if (cplx) std::copy_n(imag.begin() + start[r], len[r], imag.begin() + csr.row_ptr[r]);
    }
    const auto out_n = static_cast<std::size_t>(csr.row_ptr.back());
    col.resize(out_n);
    val.resize(out_n);
    if (cplx) imag.resize(out_n);
  }
  csr.col = std::move(col);
  csr.val = std::move(val);
  csr.imag = std::move(imag);
  return csr;
}

template Csr csr_from_rows(Array<offset_t>&&, index_t, Field, Symmetry, Array<index_t>&&, Array<double>&&,
                           Array<double>&&);
template CsrF32 csr_from_rows(Array<offset_t>&&, index_t, Field, Symmetry, Array<index_t>&&, Array<float>&&,
                              Array<float>&&);
template Csr moving_coo_to_csr(Coo&&, int);
template CsrF32 moving_coo_to_csr(CooF32&&, int);
template Csr coo_to_csr_in_place(Coo&&, bool);
template CsrF32 coo_to_csr_in_place(CooF32&&, bool);

}  // namespace detail

Coo csr_to_coo(const CsrView& csr) {
  Coo coo;
  coo.rows = csr.rows;
  coo.cols = csr.cols;
  coo.field = csr.field;
  coo.symmetry = csr.symmetry;
  const offset_t n = csr.nnz();
  coo.row.resize(n);  // zeros where a view's row_ptr (not checked here) leaves gaps
  for (index_t r = 0; r < csr.rows; ++r)
    std::fill(coo.row.begin() + csr.row_ptr[r], coo.row.begin() + csr.row_ptr[r + 1], r);
  coo.col.assign(csr.col.begin(), csr.col.end());
  detail::visit_values(csr, [&](const auto* v) { coo.val.assign(v, v + n); });
  coo.imag.assign(csr.imag.begin(), csr.imag.end());
  return coo;
}

namespace {

// The structure of a, with its values converted to V by `convert` (in parallel for large matrices).
template <class V, class Convert>
BasicCsr<V> with_values_as(const CsrView& a, Convert convert) {
  BasicCsr<V> out;
  out.rows = a.rows;
  out.cols = a.cols;
  out.field = a.field;
  out.symmetry = a.symmetry;
  out.row_ptr.assign(a.row_ptr.begin(), a.row_ptr.end());
  out.col.assign(a.col.begin(), a.col.end());
  const offset_t n = a.nnz();
  out.val.resize_for_overwrite(static_cast<std::size_t>(n));
  detail::visit_values(a, [&](const auto* v) {
#pragma omp parallel for schedule(static) if (n >= kParallelThreshold)
    for (offset_t i = 0; i < n; ++i) out.val[i] = convert(v[i]);
  });
  return out;
}

}  // namespace

CsrF32 to_float(const CsrView& a) {
  require_real(a, "to_float");
  if (a.values_in_float()) return with_values_as<float>(a, [](float v) { return v; });
  require_float_range(a);
  return with_values_as<float>(a, [](double v) { return static_cast<float>(v); });
}

Csr to_double(const CsrView& a) {
  Csr out = with_values_as<double>(a, [](auto v) { return static_cast<double>(v); });
  out.imag.assign(a.imag.begin(), a.imag.end());
  return out;
}

}  // namespace spmv
