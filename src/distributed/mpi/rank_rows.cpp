// Each rank's rows of a distributed matrix: scattered from one rank, read by one rank, or made in
// place (include/spmv/distributed.hpp).
#include <spmv/distributed.hpp>
#include <spmv/io.hpp>

#include <fmt/format.h>

#include <array>

#include "distributed/mpi/mpi_util.hpp"
#include "distributed/partition.hpp"

namespace spmv {

RankRows scatter_rows(MPI_Comm comm, const Csr* a, int root) {
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
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  io::LoadedMatrix loaded;
  std::string failure;
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

RankRows stencil_rows(MPI_Comm comm, index_t n, int points) {
  if (points != 7 && points != 27) throw Error(fmt::format("stencil_rows: points must be 7 or 27, got {}", points));
  if (n < 1 || static_cast<long long>(n) * n * n > 2147483647LL)
    throw Error(fmt::format("stencil_rows: the grid side n = {} must be 1..1290 (n^3 rows in 32-bit indices)", n));
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const long long total = static_cast<long long>(n) * n * n;
  const auto r0 = static_cast<index_t>(total * rank / size), r1 = static_cast<index_t>(total * (rank + 1) / size);
  RankRows out;
  out.global_rows = out.global_cols = static_cast<index_t>(total);
  out.row_begin = r0;
  Csr& m = out.rows;
  m.rows = r1 - r0;
  m.cols = static_cast<index_t>(total);
  m.row_ptr.assign(static_cast<std::size_t>(m.rows) + 1, 0);
  m.col.reserve(static_cast<std::size_t>(m.rows) * static_cast<std::size_t>(points));
  m.val.reserve(m.col.capacity());
  const int reach_diag = points == 27 ? 3 : 1;  // |dx|+|dy|+|dz| at most: 1 (7-point) or 3 (27-point)
  for (index_t r = r0; r < r1; ++r) {
    const index_t x = r % n, y = (r / n) % n, z = r / (static_cast<long long>(n) * n);
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {  // columns come out increasing
          if (std::abs(dx) + std::abs(dy) + std::abs(dz) > reach_diag) continue;
          const long long cx = x + dx, cy = y + dy, cz = z + dz;
          if (cx < 0 || cy < 0 || cz < 0 || cx >= n || cy >= n || cz >= n) continue;
          m.col.push_back(static_cast<index_t>(cx + n * (cy + static_cast<long long>(n) * cz)));
          m.val.push_back(dx == 0 && dy == 0 && dz == 0 ? points - 1.0 : -1.0);
        }
    m.row_ptr[static_cast<std::size_t>(r - r0) + 1] = static_cast<offset_t>(m.col.size());
  }
  return out;
}

}  // namespace spmv
