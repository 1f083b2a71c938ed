#pragma once
// Internal: the few MPI calls the distributed product makes, typed and checked. Counts above
// INT_MAX go in pieces (MPI's counts are int).
#include <spmv/types.hpp>

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace spmv::mpi {

inline void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int n = 0;
  MPI_Error_string(rc, text, &n);
  throw Error(std::string(what) + ": " + std::string(text, static_cast<std::size_t>(n)));
}

template <class T>
MPI_Datatype type() {
  if constexpr (std::is_same_v<T, double>)
    return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, float>)
    return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, char>)
    return MPI_CHAR;
  else if constexpr (std::is_integral_v<T> && std::is_signed_v<T> && sizeof(T) == 4)
    return MPI_INT32_T;
  else {
    static_assert(std::is_integral_v<T> && std::is_signed_v<T> && sizeof(T) == 8, "a type MPI is given here");
    return MPI_INT64_T;
  }
}

constexpr std::size_t kPiece = std::size_t{1} << 30;  // values per message piece

template <class T>
void irecv(T* p, std::size_t n, int from, MPI_Comm comm, std::vector<MPI_Request>& reqs) {
  for (std::size_t b = 0; b < n; b += kPiece) {
    reqs.emplace_back();
    check(MPI_Irecv(p + b, static_cast<int>(std::min(kPiece, n - b)), type<T>(), from, 0, comm, &reqs.back()),
          "MPI_Irecv");
  }
}
template <class T>
void isend(const T* p, std::size_t n, int to, MPI_Comm comm, std::vector<MPI_Request>& reqs) {
  for (std::size_t b = 0; b < n; b += kPiece) {
    reqs.emplace_back();
    check(MPI_Isend(p + b, static_cast<int>(std::min(kPiece, n - b)), type<T>(), to, 0, comm, &reqs.back()),
          "MPI_Isend");
  }
}
template <class T>
void send(const T* p, std::size_t n, int to, MPI_Comm comm) {
  for (std::size_t b = 0; b < n; b += kPiece)
    check(MPI_Send(p + b, static_cast<int>(std::min(kPiece, n - b)), type<T>(), to, 1, comm), "MPI_Send");
}
template <class T>
void recv(T* p, std::size_t n, int from, MPI_Comm comm) {
  for (std::size_t b = 0; b < n; b += kPiece)
    check(MPI_Recv(p + b, static_cast<int>(std::min(kPiece, n - b)), type<T>(), from, 1, comm, MPI_STATUS_IGNORE),
          "MPI_Recv");
}

template <class T>
std::vector<T> allgather(T v, MPI_Comm comm) {
  int n = 0;
  MPI_Comm_size(comm, &n);
  std::vector<T> out(static_cast<std::size_t>(n));
  check(MPI_Allgather(&v, 1, type<T>(), out.data(), 1, type<T>(), comm), "MPI_Allgather");
  return out;
}

inline std::vector<long long> alltoall(const std::vector<long long>& v, MPI_Comm comm) {
  std::vector<long long> out(v.size());
  check(MPI_Alltoall(v.data(), 1, MPI_LONG_LONG, out.data(), 1, MPI_LONG_LONG, comm), "MPI_Alltoall");
  return out;
}

/// Each rank's `mine` cut by `counts` (rank q gets counts[q] values, in order); returns what the
/// others sent, `incoming[q]` values from each q, in rank order. Point-to-point, so counts may pass INT_MAX.
template <class T>
std::vector<T> alltoallv(const std::vector<T>& mine, const std::vector<long long>& counts,
                         const std::vector<long long>& incoming, MPI_Comm comm) {
  std::size_t total = 0;
  for (const long long c : incoming) total += static_cast<std::size_t>(c);
  std::vector<T> out(total);
  std::vector<MPI_Request> reqs;
  std::size_t at = 0;
  for (std::size_t q = 0; q < incoming.size(); ++q) {
    if (incoming[q]) irecv(out.data() + at, static_cast<std::size_t>(incoming[q]), static_cast<int>(q), comm, reqs);
    at += static_cast<std::size_t>(incoming[q]);
  }
  at = 0;
  for (std::size_t q = 0; q < counts.size(); ++q) {
    if (counts[q]) isend(mine.data() + at, static_cast<std::size_t>(counts[q]), static_cast<int>(q), comm, reqs);
    at += static_cast<std::size_t>(counts[q]);
  }
  if (!reqs.empty()) check(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  return out;
}

/// Where any rank failed (a non-empty `failure`), every rank throws Error naming the first such rank
/// and its message: a collective step fails everywhere, not on one rank while the others wait.
inline void throw_if_any(const std::string& failure, MPI_Comm comm, const char* what) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const int mine = failure.empty() ? INT_MAX : rank;
  int first = INT_MAX;
  check(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (first == INT_MAX) return;
  long long len = static_cast<long long>(failure.size());
  check(MPI_Bcast(&len, 1, MPI_LONG_LONG, first, comm), "MPI_Bcast");
  std::string text = failure;
  text.resize(static_cast<std::size_t>(len));
  check(MPI_Bcast(text.data(), static_cast<int>(len), MPI_CHAR, first, comm), "MPI_Bcast");
  throw Error(std::string(what) + " (rank " + std::to_string(first) + "): " + text);
}

}  // namespace spmv::mpi
