// The halo-exchange plan of one distributed matrix, built once at setup:
// which ghost values this process receives from which neighbour, and which
// of its own values it sends to which neighbour. An exchange moves exactly
// the values on the partition boundary (nonblocking Isend/Irecv between
// neighbours only), so the bytes sent per product equal the boundary size;
// bytes_sent() counts them for tests.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "core/distribution.h"
#include "dist/communicator.h"
#include "dist/partition.h"

namespace jaxamg::dist {

class HaloPlan final : public PackedHalo {
 public:
  // Collective. `ghosts`: the sorted, unique global ids of the columns this
  // process needs but does not own.
  HaloPlan(const Communicator& comm, const RowPartition& part, const std::vector<int64_t>& ghosts);

  int num_ghosts() const override {
    return static_cast<int>(recv_offsets_.empty() ? 0 : recv_offsets_.back());
  }
  const std::vector<int>& recv_ranks() const { return recv_ranks_; }
  const std::vector<int>& recv_offsets() const { return recv_offsets_; }  // into the ghost order
  const std::vector<int>& send_ranks() const { return send_ranks_; }
  const std::vector<int>& send_offsets() const { return send_offsets_; }
  const std::vector<int32_t>& send_index() const { return send_index_; }  // local rows

  // Forward exchange: ghost[k] = x at ghost k's owner. begin() posts the
  // receives and sends (x is packed at once), end() waits; work may run in
  // between. One exchange at a time per plan.
  template <class T>
  void begin(const T* x, T* ghost) const;
  void end() const;
  template <class T>
  void exchange(const T* x, T* ghost) const {
    begin(x, ghost);
    end();
  }

  // Reverse exchange: every ghost slot's value travels back to the owner,
  // which receives send_index().size() values in send order (out[k] belongs
  // to local row send_index()[k]). Used for the transpose and coarse ids.
  template <class T>
  void reverse(const T* ghost_values, T* out) const;

  // PackedHalo: the same exchanges on values packed by the caller.
  const std::vector<int32_t>& send_rows() const override { return send_index_; }
  void exchange_packed(const float* send, float* ghost) const override { packed(send, ghost); }
  void exchange_packed(const double* send, double* ghost) const override { packed(send, ghost); }
  void reverse_packed(const float* ghost, float* out) const override { reverse(ghost, out); }
  void reverse_packed(const double* ghost, double* out) const override { reverse(ghost, out); }

  uint64_t bytes_sent() const { return bytes_sent_; }
  const Communicator& comm() const { return comm_; }

 private:
  // Posts the receives into ghost and the sends of buf (packed values).
  template <class T>
  void post(const T* buf, T* ghost) const;
  template <class T>
  void packed(const T* send, T* ghost) const {
    post(send, ghost);
    end();
  }

  Communicator comm_;
  std::vector<int> recv_ranks_, recv_offsets_;  // offsets: size recv_ranks + 1
  std::vector<int> send_ranks_, send_offsets_;
  std::vector<int32_t> send_index_;
  mutable std::vector<unsigned char> send_buffer_;
  mutable std::vector<MPI_Request> requests_;
  mutable uint64_t bytes_sent_ = 0;
};

}  // namespace jaxamg::dist
