// The engine communicates on a private duplicate of the caller's
// communicator (dist/private_comm.h): congruent with the caller's but a
// different communicator, made once and reused, freed with the caller's,
// made anew for a communicator that replaces a freed one, and keeping the
// engine's collectives apart from the caller's even when processes issue
// them in different orders.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "dist/communicator.h"
#include "mpi_test_util.h"

namespace jaxamg {
namespace {

using namespace mpitest;

int compare(MPI_Comm a, MPI_Comm b) {
  int result = MPI_UNEQUAL;
  MPI_Comm_compare(a, b, &result);
  return result;
}

TEST(PrivateComm, WorldAndSelfGetCongruentDuplicatesReusedOnLookup) {
  for (MPI_Comm user : {MPI_COMM_WORLD, MPI_COMM_SELF}) {
    const auto first = dist::Communicator::private_of(user);
    EXPECT_EQ(compare(first.comm(), user), MPI_CONGRUENT);
    EXPECT_NE(first.serial(), 0u);
    int user_size = 0;
    MPI_Comm_size(user, &user_size);
    EXPECT_EQ(first.size(), user_size);
    // The second lookup, by C or by Fortran handle, finds the same duplicate.
    const auto again = dist::Communicator::private_of(user);
    const auto by_handle = dist::Communicator::from_fortran(MPI_Comm_c2f(user));
    EXPECT_EQ(again.comm(), first.comm());
    EXPECT_EQ(again.serial(), first.serial());
    EXPECT_EQ(by_handle.comm(), first.comm());
    EXPECT_EQ(by_handle.serial(), first.serial());
  }
  EXPECT_NE(dist::Communicator::private_of(MPI_COMM_WORLD).serial(),
            dist::Communicator::private_of(MPI_COMM_SELF).serial());
}

TEST(PrivateComm, BorrowedCommunicatorIsUsedAsIs) {
  const dist::Communicator borrowed(MPI_COMM_WORLD);
  EXPECT_EQ(borrowed.comm(), MPI_COMM_WORLD);
  EXPECT_EQ(borrowed.serial(), 0u);
}

// Counts deletions of an attribute the test puts on the engine's duplicate:
// MPI deletes it when the duplicate is freed.
int freed_duplicates = 0;
int count_free(MPI_Comm, int, void*, void*) {
  ++freed_duplicates;
  return MPI_SUCCESS;
}

TEST(PrivateComm, FreedWithTheUserCommunicatorAndMadeAnewForItsSuccessor) {
  int watch = MPI_KEYVAL_INVALID;
  ASSERT_EQ(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_free, &watch, nullptr),
            MPI_SUCCESS);
  MPI_Comm sub = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank() % 2, rank(), &sub);
  const auto first = dist::Communicator::private_of(sub);
  EXPECT_EQ(compare(first.comm(), sub), MPI_CONGRUENT);
  EXPECT_EQ(first.size(), (size() + 1 - rank() % 2) / 2);
  // Collectives on the duplicate work (and run over the subcommunicator).
  EXPECT_EQ(first.sum_int(1), first.size());
  const uint64_t first_serial = first.serial();
  const MPI_Fint handle = MPI_Comm_c2f(sub);
  MPI_Comm_set_attr(first.comm(), watch, nullptr);

  freed_duplicates = 0;
  MPI_Comm_free(&sub);
  EXPECT_EQ(freed_duplicates, 1) << "freeing the user's communicator did not free the duplicate";

  // A new communicator (which may reuse the freed one's handle) gets its own.
  MPI_Comm next = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank() % 2, rank(), &next);
  const auto second = dist::Communicator::private_of(next);
  EXPECT_NE(second.serial(), first_serial);
  EXPECT_EQ(compare(second.comm(), next), MPI_CONGRUENT);
  EXPECT_EQ(second.sum_int(2), 2 * second.size());
  if (MPI_Comm_c2f(next) == handle) {
    EXPECT_EQ(dist::Communicator::from_fortran(handle).serial(), second.serial());
  }
  MPI_Comm_free(&next);
  MPI_Comm_free_keyval(&watch);
}

TEST(PrivateComm, UserDuplicateDoesNotInheritTheEnginesDuplicate) {
  const auto world = dist::Communicator::private_of(MPI_COMM_WORLD);
  MPI_Comm mine = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &mine);
  const auto of_mine = dist::Communicator::private_of(mine);
  EXPECT_NE(of_mine.serial(), world.serial());
  EXPECT_EQ(compare(of_mine.comm(), world.comm()), MPI_CONGRUENT);
  EXPECT_EQ(compare(of_mine.comm(), mine), MPI_CONGRUENT);
  MPI_Comm_free(&mine);
}

// Rank 0 starts the user's reduction first, the others the engine's: on one
// communicator these would match each other; on the duplicate each matches
// its own kind.
TEST(PrivateComm, EngineCollectivesDoNotMatchTheUsersInAnotherOrder) {
  const auto engine = dist::Communicator::private_of(MPI_COMM_WORLD);
  const int64_t user_in = 1, engine_in = 1000 + rank();
  int64_t user_out = 0, engine_out = 0;
  MPI_Request req[2];
  auto post_user = [&](MPI_Request* r) {
    MPI_Iallreduce(&user_in, &user_out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, r);
  };
  auto post_engine = [&](MPI_Request* r) {
    MPI_Iallreduce(&engine_in, &engine_out, 1, MPI_INT64_T, MPI_SUM, engine.comm(), r);
  };
  if (rank() == 0) {
    post_user(&req[0]);
    post_engine(&req[1]);
  } else {
    post_engine(&req[1]);
    post_user(&req[0]);
  }
  MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  const int64_t P = size();
  EXPECT_EQ(user_out, P);
  EXPECT_EQ(engine_out, 1000 * P + P * (P - 1) / 2);
}

// First uses of two communicators on two threads, in opposite orders on
// even and odd ranks: serialising the duplications would deadlock (a hang
// fails by ctest's timeout).
TEST(PrivateComm, ConcurrentFirstUsesOfTwoCommunicatorsDoNotDeadlock) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE) GTEST_SKIP() << "needs MPI_THREAD_MULTIPLE";
  MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_dup(MPI_COMM_WORLD, &b);
  const bool even = rank() % 2 == 0;
  int64_t sum_a = 0, sum_b = 0;
  auto use = [](MPI_Comm c, bool wait, int64_t* out) {
    if (wait) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    *out = dist::Communicator::private_of(c).sum_int(1);
  };
  std::thread ta(use, a, !even, &sum_a);
  std::thread tb(use, b, even, &sum_b);
  ta.join();
  tb.join();
  EXPECT_EQ(sum_a, size());
  EXPECT_EQ(sum_b, size());
  // Both threads asking for the same new communicator share one duplicate.
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  uint64_t s1 = 0, s2 = 0;
  std::thread t1([&] { s1 = dist::Communicator::private_of(c).serial(); });
  std::thread t2([&] { s2 = dist::Communicator::private_of(c).serial(); });
  t1.join();
  t2.join();
  EXPECT_EQ(s1, s2);
  MPI_Comm_free(&c);
  MPI_Comm_free(&b);
  MPI_Comm_free(&a);
}

}  // namespace
}  // namespace jaxamg
