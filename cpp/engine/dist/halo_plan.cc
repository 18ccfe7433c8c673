#include "dist/halo_plan.h"

#include <string>

#include "core/error.h"

namespace jaxamg::dist {

HaloPlan::HaloPlan(const Communicator& comm, const RowPartition& part,
                   const std::vector<int64_t>& ghosts)
    : comm_(comm) {
  const int size = comm.size();
  // Ghosts are sorted by global id, hence grouped by owner in rank order.
  std::vector<int> recv_count(size, 0);
  for (int64_t g : ghosts) ++recv_count[part.owner(g)];
  recv_offsets_.push_back(0);
  for (int r = 0; r < size; ++r) {
    if (recv_count[r] == 0) continue;
    recv_ranks_.push_back(r);
    recv_offsets_.push_back(recv_offsets_.back() + recv_count[r]);
  }
  // How many values each process asks of us: one integer per process pair,
  // the only all-to-all of the setup (metadata, not vectors).
  std::vector<int> send_count(size, 0);
  MPI_Alltoall(recv_count.data(), 1, MPI_INT, send_count.data(), 1, MPI_INT, comm.comm());
  send_offsets_.push_back(0);
  for (int r = 0; r < size; ++r) {
    if (send_count[r] == 0) continue;
    send_ranks_.push_back(r);
    send_offsets_.push_back(send_offsets_.back() + send_count[r]);
  }
  // The requested global ids travel once, neighbour to neighbour.
  std::vector<int64_t> requested(static_cast<std::size_t>(send_offsets_.back()));
  std::vector<MPI_Request> reqs;
  for (std::size_t i = 0; i < send_ranks_.size(); ++i) {
    reqs.emplace_back();
    MPI_Irecv(requested.data() + send_offsets_[i], send_offsets_[i + 1] - send_offsets_[i],
              MPI_INT64_T, send_ranks_[i], kHaloTag, comm.comm(), &reqs.back());
  }
  for (std::size_t i = 0; i < recv_ranks_.size(); ++i) {
    reqs.emplace_back();
    MPI_Isend(ghosts.data() + recv_offsets_[i], recv_offsets_[i + 1] - recv_offsets_[i],
              MPI_INT64_T, recv_ranks_[i], kHaloTag, comm.comm(), &reqs.back());
  }
  MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
  send_index_.resize(requested.size());
  for (std::size_t k = 0; k < requested.size(); ++k) {
    // Owners were computed from the same partition: always in range.
    send_index_[k] = static_cast<int32_t>(requested[k] - part.row_start);
  }
  requests_.resize(send_ranks_.size() + recv_ranks_.size());
}

template <class T>
void HaloPlan::begin(const T* x, T* ghost) const {
  const std::size_t nsend = send_index_.size();
  send_buffer_.resize(nsend * sizeof(T));
  T* buf = reinterpret_cast<T*>(send_buffer_.data());
  for (std::size_t k = 0; k < nsend; ++k) buf[k] = x[send_index_[k]];
  post(buf, ghost);
}

template <class T>
void HaloPlan::post(const T* buf, T* ghost) const {
  std::size_t q = 0;
  for (std::size_t i = 0; i < recv_ranks_.size(); ++i) {
    MPI_Irecv(ghost + recv_offsets_[i], recv_offsets_[i + 1] - recv_offsets_[i], mpi_type<T>(),
              recv_ranks_[i], kHaloTag, comm_.comm(), &requests_[q++]);
  }
  for (std::size_t i = 0; i < send_ranks_.size(); ++i) {
    MPI_Isend(buf + send_offsets_[i], send_offsets_[i + 1] - send_offsets_[i], mpi_type<T>(),
              send_ranks_[i], kHaloTag, comm_.comm(), &requests_[q++]);
  }
  bytes_sent_ += send_index_.size() * sizeof(T);
}

void HaloPlan::end() const {
  MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
}

template <class T>
void HaloPlan::reverse(const T* ghost_values, T* out) const {
  std::vector<MPI_Request> reqs;
  reqs.reserve(send_ranks_.size() + recv_ranks_.size());
  for (std::size_t i = 0; i < send_ranks_.size(); ++i) {
    reqs.emplace_back();
    MPI_Irecv(out + send_offsets_[i], send_offsets_[i + 1] - send_offsets_[i], mpi_type<T>(),
              send_ranks_[i], kHaloTag, comm_.comm(), &reqs.back());
  }
  for (std::size_t i = 0; i < recv_ranks_.size(); ++i) {
    reqs.emplace_back();
    MPI_Isend(ghost_values + recv_offsets_[i], recv_offsets_[i + 1] - recv_offsets_[i],
              mpi_type<T>(), recv_ranks_[i], kHaloTag, comm_.comm(), &reqs.back());
  }
  MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
  bytes_sent_ += static_cast<uint64_t>(num_ghosts()) * sizeof(T);
}

template void HaloPlan::begin(const float*, float*) const;
template void HaloPlan::begin(const double*, double*) const;
template void HaloPlan::begin(const int64_t*, int64_t*) const;
template void HaloPlan::reverse(const float*, float*) const;
template void HaloPlan::reverse(const double*, double*) const;
template void HaloPlan::reverse(const int64_t*, int64_t*) const;

}  // namespace jaxamg::dist
