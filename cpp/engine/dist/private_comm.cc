#include "dist/private_comm.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>

#include "dist/communicator.h"

namespace jaxamg::dist {

namespace {

// The attribute value cached on a caller's communicator.
struct Record {
  MPI_Comm dup = MPI_COMM_NULL;
  uint64_t serial = 0;
};

std::atomic<uint64_t> next_serial{1};
// Set when MPI_Finalize has started (see private_comm.h): from then on
// MPI_Finalize releases the duplicates itself.
std::atomic<bool> finalizing{false};

int delete_record(MPI_Comm, int, void* value, void*) {
  auto* record = static_cast<Record*>(value);
  int rc = MPI_SUCCESS;
  if (!finalizing.load()) rc = MPI_Comm_free(&record->dup);
  delete record;
  return rc;
}

int mark_finalizing(MPI_Comm, int, void*, void*) {
  finalizing.store(true);
  return MPI_SUCCESS;
}

// Guards the keyval's creation and the set of communicators being
// duplicated right now.
std::mutex registry_mutex;
std::condition_variable duplicated;
std::set<MPI_Comm> in_progress;
int record_keyval = MPI_KEYVAL_INVALID;

// The keyval of the cached duplicates, created on first use together with
// the MPI_COMM_SELF attribute that marks the start of MPI_Finalize.
// Caller holds registry_mutex.
int keyval_locked() {
  if (record_keyval != MPI_KEYVAL_INVALID) return record_keyval;
  int hook = MPI_KEYVAL_INVALID;
  check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, mark_finalizing, &hook, nullptr),
            "MPI_Comm_create_keyval");
  check_mpi(MPI_Comm_set_attr(MPI_COMM_SELF, hook, nullptr), "MPI_Comm_set_attr");
  // Freeing a keyval only marks it: the attribute stays until deleted.
  check_mpi(MPI_Comm_free_keyval(&hook), "MPI_Comm_free_keyval");
  int keyval = MPI_KEYVAL_INVALID;
  check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_record, &keyval, nullptr),
            "MPI_Comm_create_keyval");
  record_keyval = keyval;
  return record_keyval;
}

const Record* cached(MPI_Comm user, int keyval) {
  void* value = nullptr;
  int found = 0;
  check_mpi(MPI_Comm_get_attr(user, keyval, &value, &found), "MPI_Comm_get_attr");
  return found ? static_cast<const Record*>(value) : nullptr;
}

}  // namespace

PrivateComm private_duplicate(MPI_Comm user) {
  int keyval = MPI_KEYVAL_INVALID;
  {
    std::unique_lock<std::mutex> lock(registry_mutex);
    keyval = keyval_locked();
    for (;;) {
      if (const Record* r = cached(user, keyval)) return {r->dup, r->serial};
      // Another thread of this process is duplicating `user`: wait for it.
      if (in_progress.count(user) == 0) break;
      duplicated.wait(lock);
    }
    in_progress.insert(user);
  }
  // Outside the lock: MPI_Comm_dup waits for the other processes, which may
  // first be duplicating another communicator on another thread.
  auto finish = [&] {
    std::lock_guard<std::mutex> lock(registry_mutex);
    in_progress.erase(user);
    duplicated.notify_all();
  };
  auto* record = new Record;
  try {
    check_mpi(MPI_Comm_dup(user, &record->dup), "MPI_Comm_dup");
    record->serial = next_serial.fetch_add(1);
    const int rc = MPI_Comm_set_attr(user, keyval, record);
    if (rc != MPI_SUCCESS) MPI_Comm_free(&record->dup);
    check_mpi(rc, "MPI_Comm_set_attr");
  } catch (...) {
    delete record;
    finish();
    throw;
  }
  const PrivateComm out{record->dup, record->serial};
  finish();
  return out;
}

}  // namespace jaxamg::dist
