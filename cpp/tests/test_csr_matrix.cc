#include <gtest/gtest.h>

#include "core/csr_matrix.h"
#include "core/error.h"

namespace jaxamg {
namespace {

TEST(CsrMatrix, SortsColumnsAndSumsDuplicates) {
  // Row 0: (0,1)=2, (0,0)=1, (0,1)=3  -> (0,0)=1, (0,1)=5
  std::vector<Index> rp{0, 3, 4};
  std::vector<Index> ci{1, 0, 1, 1};
  std::vector<double> v{2, 1, 3, 7};
  auto A = make_csr<double>(2, 2, rp.data(), ci.data(), v.data(), 4);
  EXPECT_EQ(A.nnz(), 3);
  EXPECT_EQ(A.col, (std::vector<Index>{0, 1, 1}));
  EXPECT_EQ(A.val, (std::vector<double>{1, 5, 7}));
  EXPECT_EQ(A.diag_pos, (std::vector<Index>{0, 2}));
}

TEST(CsrMatrix, RejectsOutOfRangeColumn) {
  std::vector<Index> rp{0, 1, 2};
  std::vector<Index> ci{0, 2};
  std::vector<double> v{1, 1};
  try {
    make_csr<double>(2, 2, rp.data(), ci.data(), v.data(), 2);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("column index 2 in row 1 is out of range"), std::string::npos)
        << e.what();
  }
}

TEST(CsrMatrix, RejectsNaN) {
  std::vector<Index> rp{0, 1};
  std::vector<Index> ci{0};
  std::vector<float> v{std::numeric_limits<float>::quiet_NaN()};
  EXPECT_THROW(make_csr<float>(1, 1, rp.data(), ci.data(), v.data(), 1), InvalidInput);
}

TEST(CsrMatrix, TransposeTwiceIsIdentity) {
  std::vector<Index> rp{0, 2, 3, 5};
  std::vector<Index> ci{0, 2, 1, 0, 2};
  std::vector<double> v{1, 2, 3, 4, 5};
  auto A = make_csr<double>(3, 3, rp.data(), ci.data(), v.data(), 5);
  auto At = transpose(A);
  EXPECT_EQ(At.col, (std::vector<Index>{0, 2, 1, 0, 2}));
  EXPECT_EQ(At.val, (std::vector<double>{1, 4, 3, 2, 5}));
  auto Att = transpose(At);
  EXPECT_EQ(Att.col, A.col);
  EXPECT_EQ(Att.val, A.val);
  EXPECT_FALSE(is_symmetric(A));
}

}  // namespace
}  // namespace jaxamg
