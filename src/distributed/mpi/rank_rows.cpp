// Each rank's rows of a distributed matrix: scattered from one rank, read by one rank, or made in
// place (include/spmv/distributed.hpp).
#include <spmv/distributed.hpp>
#include <spmv/io.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "distributed/mpi/mpi_util.hpp"
#include "distributed/partition.hpp"
#include "io/io_internal.hpp"

namespace spmv {

RankRows scatter_rows(MPI_Comm user_comm, const Csr* a, int root) {
  // Its own communicator: its messages never meet the caller's.
  MPI_Comm comm;
  mpi::check(MPI_Comm_dup(user_comm, &comm), "MPI_Comm_dup");
  struct Free {
    MPI_Comm& c;
    ~Free() { MPI_Comm_free(&c); }
  } free_comm{comm};
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::string failure;
  if (rank == root && (!a || a->is_complex()))
    failure = a ? "scatter_rows: a real matrix (complex matrices are not distributed)"
                : "scatter_rows: no matrix on the root";
  mpi::throw_if_any(failure, comm, "scatter_rows");
  // The root's partition and sizes, then each rank's rows, offsets from its first row's.
  std::array<long long, 2> shape{};
  std::vector<index_t> bounds(static_cast<std::size_t>(size) + 1);
  if (rank == root) {
    shape = {a->rows, a->cols};
    bounds = dist::partition_rows(a->view(), size).bounds;
  }
  mpi::check(MPI_Bcast(shape.data(), 2, MPI_LONG_LONG, root, comm), "MPI_Bcast");
  mpi::check(MPI_Bcast(bounds.data(), size + 1, MPI_INT32_T, root, comm), "MPI_Bcast");
  RankRows out;
  out.global_rows = static_cast<index_t>(shape[0]);
  out.global_cols = static_cast<index_t>(shape[1]);
  out.row_begin = bounds[static_cast<std::size_t>(rank)];
  const index_t n = bounds[static_cast<std::size_t>(rank) + 1] - out.row_begin;
  Csr& m = out.rows;
  m.rows = n;
  m.cols = out.global_cols;
  m.row_ptr.resize(static_cast<std::size_t>(n) + 1);
  if (rank == root) {
    for (int q = 0; q < size; ++q) {
      const index_t r0 = bounds[static_cast<std::size_t>(q)], r1 = bounds[static_cast<std::size_t>(q) + 1];
      const offset_t base = a->row_ptr[r0], nnz = a->row_ptr[r1] - base;
      if (q == root) {
        for (index_t r = r0; r <= r1; ++r) m.row_ptr[static_cast<std::size_t>(r - r0)] = a->row_ptr[r] - base;
        m.col.assign(a->col.begin() + base, a->col.begin() + base + nnz);
        m.val.assign(a->val.begin() + base, a->val.begin() + base + nnz);
        continue;
      }
      std::vector<offset_t> ptr(static_cast<std::size_t>(r1 - r0) + 1);
      for (index_t r = r0; r <= r1; ++r) ptr[static_cast<std::size_t>(r - r0)] = a->row_ptr[r] - base;
      mpi::send(ptr.data(), ptr.size(), q, comm);
      mpi::send(a->col.data() + base, static_cast<std::size_t>(nnz), q, comm);
      mpi::send(a->val.data() + base, static_cast<std::size_t>(nnz), q, comm);
    }
  } else {
    mpi::recv(m.row_ptr.data(), m.row_ptr.size(), root, comm);
    const auto nnz = static_cast<std::size_t>(m.row_ptr.back());
    m.col.resize(nnz);
    m.val.resize(nnz);
    mpi::recv(m.col.data(), nnz, root, comm);
    mpi::recv(m.val.data(), nnz, root, comm);
  }
  return out;
}

RankRows read_rows(MPI_Comm comm, const std::string& path, int root) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // A plain binary cache: the root reads its row offsets and splits the rows, every rank reads its
  // own rows (pread). Anything else: the root reads the whole matrix and scatters it.
  io::detail::BinaryLayout layout;
  int binary = 0;
  std::string failure;
  if (rank == root) {
    try {
      const auto l = io::detail::binary_layout(path);
      binary = l.has_value();
      if (l) layout = *l;
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  mpi::throw_if_any(failure, comm, "read_rows");
  mpi::check(MPI_Bcast(&binary, 1, MPI_INT, root, comm), "MPI_Bcast");
  if (binary) {
    mpi::check(MPI_Bcast(&layout, sizeof layout, MPI_BYTE, root, comm), "MPI_Bcast");
    std::vector<index_t> bounds(static_cast<std::size_t>(size) + 1);
    if (rank == root) {
      try {
        const std::vector<offset_t> ptr = io::detail::read_binary_row_ptr(path, layout);
        // The offsets as a whole (each rank checks its part's structure, not where parts meet).
        if (ptr.front() != 0 || ptr.back() != layout.nnz || !std::is_sorted(ptr.begin(), ptr.end()))
          throw ParseError(path, 0, "corrupt binary cache: its row offsets do not run from 0 to nnz in order");
        CsrView offsets;
        offsets.rows = layout.rows;
        offsets.cols = layout.cols;
        offsets.row_ptr = ptr;
        bounds = dist::partition_rows(offsets, size).bounds;
      } catch (const std::exception& e) {
        failure = e.what();
      }
    }
    mpi::throw_if_any(failure, comm, "read_rows");
    mpi::check(MPI_Bcast(bounds.data(), size + 1, MPI_INT32_T, root, comm), "MPI_Bcast");
    RankRows out;
    out.global_rows = layout.rows;
    out.global_cols = layout.cols;
    out.row_begin = bounds[static_cast<std::size_t>(rank)];
    try {
      out.rows = io::detail::read_binary_rows(path, layout, out.row_begin, bounds[static_cast<std::size_t>(rank) + 1]);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    mpi::throw_if_any(failure, comm, "read_rows");
    return out;
  }
  io::LoadedMatrix loaded;
  if (rank == root) {
    try {
      loaded = io::load(path);
      if (loaded.matrix.is_complex()) failure = path + ": a complex matrix (the distributed product is real)";
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  mpi::throw_if_any(failure, comm, "read_rows");
  return scatter_rows(comm, rank == root ? &loaded.matrix : nullptr, root);
}

RankRows stencil_rows(MPI_Comm comm, index_t n, int points, int dofs) {
  if (points != 7 && points != 27) throw Error(fmt::format("stencil_rows: points must be 7 or 27, got {}", points));
  if (dofs < 1 || dofs > 8) throw Error(fmt::format("stencil_rows: dofs must be 1..8, got {}", dofs));
  if (n < 1 || static_cast<long long>(n) * n * n * dofs > 2147483647LL)
    throw Error(fmt::format("stencil_rows: an {}^3 grid of {} dofs a node passes 2^31 rows", n, dofs));
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const long long total = static_cast<long long>(n) * n * n * dofs;
  const auto r0 = static_cast<index_t>(total * rank / size), r1 = static_cast<index_t>(total * (rank + 1) / size);
  RankRows out;
  out.global_rows = out.global_cols = static_cast<index_t>(total);
  out.row_begin = r0;
  Csr& m = out.rows;
  m.rows = r1 - r0;
  m.cols = static_cast<index_t>(total);
  const int reach = points == 27 ? 3 : 1;  // |dx|+|dy|+|dz| at most: 1 (7-point) or 3 (27-point)
  const long long nn = n;
  // A node's neighbours (itself included) in increasing order; each brings its dofs' columns.
  const auto for_each_neighbour = [&](long long node, auto&& f) {
    const long long x = node % nn, y = (node / nn) % nn, z = node / (nn * nn);
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          if (std::abs(dx) + std::abs(dy) + std::abs(dz) > reach) continue;
          const long long cx = x + dx, cy = y + dy, cz = z + dz;
          if (cx < 0 || cy < 0 || cz < 0 || cx >= nn || cy >= nn || cz >= nn) continue;
          f(cx + nn * (cy + nn * cz), dx == 0 && dy == 0 && dz == 0);
        }
  };
  // Row lengths, their offsets, then the rows filled in parallel.
  m.row_ptr.resize(static_cast<std::size_t>(m.rows) + 1);
  m.row_ptr[0] = 0;
#pragma omp parallel for schedule(static)
  for (index_t r = r0; r < r1; ++r) {
    offset_t len = 0;
    for_each_neighbour(static_cast<long long>(r) / dofs, [&](long long, bool) { len += dofs; });
    m.row_ptr[static_cast<std::size_t>(r - r0) + 1] = len;
  }
  for (std::size_t i = 1; i < m.row_ptr.size(); ++i) m.row_ptr[i] += m.row_ptr[i - 1];
  m.col.resize(static_cast<std::size_t>(m.row_ptr.back()));
  m.val.resize(m.col.size());
  const double diagonal = points * dofs - 1.0;
#pragma omp parallel for schedule(static)
  for (index_t r = r0; r < r1; ++r) {
    std::size_t at = static_cast<std::size_t>(m.row_ptr[static_cast<std::size_t>(r - r0)]);
    const int d = r % dofs;
    for_each_neighbour(static_cast<long long>(r) / dofs, [&](long long node, bool self) {
      for (int e = 0; e < dofs; ++e, ++at) {
        m.col[at] = static_cast<index_t>(node * dofs + e);
        m.val[at] = self && e == d ? diagonal : -1.0;
      }
    });
  }
  return out;
}

namespace {

// splitmix64: a row's stream of random numbers from (seed, row) alone.
std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

RankRows random_rows(MPI_Comm comm, index_t n, int per_row, std::uint64_t seed) {
  if (n < 1 || per_row < 1 || per_row > n)
    throw Error(fmt::format("random_rows: n = {} rows with {} entries each: need 1 <= entries <= n", n, per_row));
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const auto r0 = static_cast<index_t>(static_cast<long long>(n) * rank / size);
  const auto r1 = static_cast<index_t>(static_cast<long long>(n) * (rank + 1) / size);
  RankRows out;
  out.global_rows = out.global_cols = n;
  out.row_begin = r0;
  Csr& m = out.rows;
  m.rows = r1 - r0;
  m.cols = n;
  m.row_ptr.assign(static_cast<std::size_t>(m.rows) + 1, 0);
  m.col.resize(static_cast<std::size_t>(m.rows) * static_cast<std::size_t>(per_row));
  m.val.resize(m.col.size());
#pragma omp parallel for schedule(static)
  for (index_t r = r0; r < r1; ++r) {
    std::uint64_t state = mix64(seed ^ mix64(static_cast<std::uint64_t>(r)));
    const auto next = [&state] { return state = mix64(state); };
    const std::size_t at = static_cast<std::size_t>(r - r0) * static_cast<std::size_t>(per_row);
    index_t* cols = m.col.data() + at;
    cols[0] = r;
    for (int k = 1; k < per_row;) {  // distinct columns (rejection: per_row is small against n)
      const auto c = static_cast<index_t>(next() % static_cast<std::uint64_t>(n));
      if (std::find(cols, cols + k, c) == cols + k) cols[k++] = c;
    }
    std::sort(cols, cols + per_row);
    for (int k = 0; k < per_row; ++k)
      m.val[at + static_cast<std::size_t>(k)] = static_cast<double>(next() >> 11) * 0x1.0p-52 - 1.0;
    m.row_ptr[static_cast<std::size_t>(r - r0) + 1] = static_cast<offset_t>(at) + per_row;
  }
  return out;
}

}  // namespace spmv
