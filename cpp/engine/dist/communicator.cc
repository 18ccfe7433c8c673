#include "dist/communicator.h"

#include <algorithm>

#include "core/error.h"
#include "dist/private_comm.h"

namespace jaxamg::dist {

void check_mpi(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw std::runtime_error(std::string(what) + " failed: " + std::string(text, len));
  }
}

namespace {

void require_usable(MPI_Comm comm) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    throw InvalidInput("comm: MPI is not initialised in this process; initialise it first "
                       "(import mpi4py.MPI, or call MPI_Init)");
  }
  if (comm == MPI_COMM_NULL) {
    throw InvalidInput("comm: the communicator is MPI_COMM_NULL; pass a communicator this "
                       "process belongs to");
  }
}

}  // namespace

Communicator::Communicator(MPI_Comm comm) : comm_(comm) {
  require_usable(comm);
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

Communicator Communicator::private_of(MPI_Comm user) {
  require_usable(user);
  const PrivateComm dup = private_duplicate(user);
  Communicator out(dup.comm);
  out.serial_ = dup.serial;
  return out;
}

Communicator Communicator::from_fortran(int64_t handle) {
  return private_of(MPI_Comm_f2c(static_cast<MPI_Fint>(handle)));
}

void Communicator::sum(double* v, int count) const {
  if (size_ == 1) return;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, v, count, MPI_DOUBLE, MPI_SUM, comm_), "MPI_Allreduce");
}

double Communicator::max(double v) const {
  if (size_ == 1) return v;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, comm_), "MPI_Allreduce");
  return v;
}

int64_t Communicator::sum_int(int64_t v) const {
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_SUM, comm_), "MPI_Allreduce");
  return v;
}

int64_t Communicator::max_int(int64_t v) const {
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_MAX, comm_), "MPI_Allreduce");
  return v;
}

int64_t Communicator::min_int(int64_t v) const {
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_MIN, comm_), "MPI_Allreduce");
  return v;
}

int64_t Communicator::exclusive_scan(int64_t v) const {
  int64_t out = 0;
  check_mpi(MPI_Exscan(&v, &out, 1, MPI_INT64_T, MPI_SUM, comm_), "MPI_Exscan");
  return rank_ == 0 ? 0 : out;
}

std::vector<int64_t> Communicator::allgather(int64_t v) const {
  std::vector<int64_t> out(size_);
  check_mpi(MPI_Allgather(&v, 1, MPI_INT64_T, out.data(), 1, MPI_INT64_T, comm_), "MPI_Allgather");
  return out;
}

void Communicator::agree(const std::string& local_error, int kind) const {
  // The lowest failing rank speaks for everyone.
  int first = local_error.empty() ? size_ : rank_;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm_), "MPI_Allreduce");
  if (first == size_) return;
  int header[2] = {kind, static_cast<int>(local_error.size())};
  check_mpi(MPI_Bcast(header, 2, MPI_INT, first, comm_), "MPI_Bcast");
  std::string text(static_cast<std::size_t>(header[1]), '\0');
  if (rank_ == first) text = local_error;
  if (header[1] > 0) check_mpi(MPI_Bcast(text.data(), header[1], MPI_CHAR, first, comm_), "MPI_Bcast");
  // Nested agreements (a solver inside a solver) must not stack prefixes.
  const std::string prefix = "rank " + std::to_string(first) + ": ";
  if (text.rfind("rank ", 0) == 0 && text.find(": ") != std::string::npos) {
    throw_error_of_kind(header[0], text);
  }
  throw_error_of_kind(header[0], prefix + text);
}

}  // namespace jaxamg::dist
