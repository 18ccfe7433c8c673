// The halo exchange of a distributed matrix for vectors in device memory,
// staged through host buffers: the owned values that neighbours need are
// gathered on the device, copied to pinned host memory, exchanged by the
// distribution's PackedHalo (MPI on the host, so any MPI build works and
// several processes may share a GPU), and the received ghost values copied
// into the vector's ghost tail.
//
// A vector of a distributed level holds `owned` entries followed by a tail
// of num_ghosts() entries (its capacity); a product fills the tail of its
// input before its kernel, which reads column c of any row from entry c.
// The tail is scratch: whoever reads ghosts fills them first.
//
// Each exchange waits for the stream (MPI needs the values on the host), so
// a solve that exchanges cannot run inside a CUDA graph.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

#include "backend/cuda/device_array.h"
#include "core/distribution.h"
#include "core/types.h"

namespace jaxamg::cuda {

template <class T>
class DeviceHalo {
 public:
  // `halo` must outlive this object; `owned`: the entries the vectors own.
  DeviceHalo(const PackedHalo& halo, Index owned);
  ~DeviceHalo();
  DeviceHalo(const DeviceHalo&) = delete;
  DeviceHalo& operator=(const DeviceHalo&) = delete;

  Index owned() const { return owned_; }
  Index num_ghosts() const { return ghosts_; }

  // x[owned + k] = ghost k's value at its owner, on `s` (the host waits for
  // the stream's work on x). x is const for its owned entries only.
  void fill(const T* x, cudaStream_t s) const;
  // The reverse: y[owned + k] (partial sums for ghost k) travel to their
  // owners, which add them to their rows in send order; y's owned entries
  // take what the neighbours send back.
  void reverse_add(T* y, cudaStream_t s) const;

 private:
  // Whether this process exchanges anything (a process without neighbours
  // takes no part: the exchanges are neighbour to neighbour).
  bool active() const { return sends_ > 0 || ghosts_ > 0; }

  const PackedHalo& halo_;
  Index owned_, ghosts_, sends_;
  DeviceArray<Index> send_rows_;
  // reverse_add: the send slots grouped by row (rows in first-seen order,
  // each row's slots in send order) so that one thread adds a row's values
  // in the order the host engine does.
  DeviceArray<Index> add_rows_, add_ptr_, add_slots_;
  Index add_count_ = 0;
  mutable DeviceArray<T> packed_;  // device: values to send / received back
  T* host_send_ = nullptr;         // pinned: send_rows entries
  T* host_ghost_ = nullptr;        // pinned: num_ghosts entries
};

}  // namespace jaxamg::cuda
