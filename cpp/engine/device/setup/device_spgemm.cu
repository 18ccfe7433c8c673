#include "device/setup/device_spgemm.h"

#include <cub/device/device_segmented_sort.cuh>

#include <memory>
#include <type_traits>

#include "backend/cuda/setup/canonical_pattern.h"

namespace jaxamg::cuda {

namespace {

template <class T>
constexpr cudaDataType value_type() {
  return std::is_same<T, double>::value ? CUDA_R_64F : CUDA_R_32F;
}

// Owns the cuSPARSE descriptors of one product.
struct SpgemmDescriptors {
  SpgemmDescriptors() = default;
  SpgemmDescriptors(const SpgemmDescriptors&) = delete;
  SpgemmDescriptors& operator=(const SpgemmDescriptors&) = delete;
  cusparseConstSpMatDescr_t a = nullptr, b = nullptr;
  cusparseSpMatDescr_t c = nullptr;
  cusparseSpGEMMDescr_t op = nullptr;
  ~SpgemmDescriptors() {
    if (op) cusparseSpGEMM_destroyDescr(op);
    if (c) cusparseDestroySpMat(c);
    if (b) cusparseDestroySpMat(b);
    if (a) cusparseDestroySpMat(a);
  }
};

// Sorts each row's (column, value) pairs by column.
template <class T>
void sort_rows(Index rows, Index nnz, const Index* ptr, DeviceArray<Index>& col,
               DeviceArray<T>& val) {
  DeviceArray<Index> col_out(nnz);
  DeviceArray<T> val_out(nnz);
  std::size_t bytes = 0;
  check(cub::DeviceSegmentedSort::StableSortPairs(nullptr, bytes, col.data(), col_out.data(),
                                                  val.data(), val_out.data(), nnz, rows, ptr,
                                                  ptr + 1),
        "cub::DeviceSegmentedSort::StableSortPairs (size)");
  DeviceArray<unsigned char> temp(bytes > 0 ? bytes : 1);
  check(cub::DeviceSegmentedSort::StableSortPairs(temp.data(), bytes, col.data(), col_out.data(),
                                                  val.data(), val_out.data(), nnz, rows, ptr,
                                                  ptr + 1),
        "cub::DeviceSegmentedSort::StableSortPairs");
  col = std::move(col_out);
  val = std::move(val_out);
}

// Runs cuSPARSE's work estimation and compute phases with `alg`. Returns
// false when the default algorithm reports that the product needs more
// scratch memory than it can take; every other failure raises.
bool spgemm_phases(cusparseHandle_t handle, SpgemmDescriptors& d, cudaDataType type,
                   cusparseSpGEMMAlg_t alg, const void* one, const void* zero,
                   DeviceArray<unsigned char>& buffer1, DeviceArray<unsigned char>& buffer2) {
  const cusparseOperation_t kN = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const auto soft = [&](cusparseStatus_t status, const char* operation) {
    if (status == CUSPARSE_STATUS_INSUFFICIENT_RESOURCES && alg != CUSPARSE_SPGEMM_ALG3) {
      return false;
    }
    check(status, operation);
    return true;
  };
  // The default algorithm's scratch grows with the intermediate products
  // (tens of GiB for a classical Galerkin product at 256^3), and cuSPARSE
  // asks for it without saying it is short. Past half the free memory, which
  // leaves room for the product itself and the sort after it, the chunked
  // algorithm takes over.
  const auto fits = [&](std::size_t bytes) {
    if (alg == CUSPARSE_SPGEMM_ALG3) return true;
    std::size_t free_bytes = 0, total_bytes = 0;
    check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    return bytes <= free_bytes / 2;
  };
  std::size_t bytes1 = 0, bytes2 = 0;
  if (!soft(cusparseSpGEMM_workEstimation(handle, kN, kN, one, d.a, d.b, zero, d.c, type, alg, d.op,
                                          &bytes1, nullptr),
            "cusparseSpGEMM_workEstimation (size)") ||
      !fits(bytes1)) {
    return false;
  }
  buffer1 = DeviceArray<unsigned char>(bytes1 > 0 ? bytes1 : 1);
  if (!soft(cusparseSpGEMM_workEstimation(handle, kN, kN, one, d.a, d.b, zero, d.c, type, alg, d.op,
                                          &bytes1, buffer1.data()),
            "cusparseSpGEMM_workEstimation")) {
    return false;
  }
  if (alg == CUSPARSE_SPGEMM_ALG3) {
    // The chunked algorithm sizes its compute buffer for a fraction of the
    // intermediate products at a time.
    constexpr float kChunkFraction = 0.2f;
    std::size_t bytes3 = 0;
    check(cusparseSpGEMM_estimateMemory(handle, kN, kN, one, d.a, d.b, zero, d.c, type, alg, d.op,
                                        kChunkFraction, &bytes3, nullptr, nullptr),
          "cusparseSpGEMM_estimateMemory (size)");
    DeviceArray<unsigned char> buffer3(bytes3 > 0 ? bytes3 : 1);
    check(cusparseSpGEMM_estimateMemory(handle, kN, kN, one, d.a, d.b, zero, d.c, type, alg, d.op,
                                        kChunkFraction, &bytes3, buffer3.data(), &bytes2),
          "cusparseSpGEMM_estimateMemory");
  } else if (!soft(cusparseSpGEMM_compute(handle, kN, kN, one, d.a, d.b, zero, d.c, type, alg, d.op,
                                          &bytes2, nullptr),
                   "cusparseSpGEMM_compute (size)") ||
             !fits(bytes2)) {
    return false;
  }
  buffer2 = DeviceArray<unsigned char>(bytes2 > 0 ? bytes2 : 1);
  return soft(cusparseSpGEMM_compute(handle, kN, kN, one, d.a, d.b, zero, d.c, type, alg, d.op,
                                     &bytes2, buffer2.data()),
              "cusparseSpGEMM_compute");
}

}  // namespace

// The default algorithm is the fastest but keeps every intermediate product
// in scratch memory; on the largest Galerkin products (classical
// interpolation at 256^3) cuSPARSE refuses it, or its scratch exceeds the
// free memory, and the same product is then formed in chunks (ALG3).
template <class T>
void device_spgemm(cusparseHandle_t handle, const DeviceCsrView<T>& A, Index a_cols,
                   const DeviceCsrView<T>& B, Index b_cols, DeviceArray<Index>& ptr,
                   DeviceArray<Index>& col, DeviceArray<T>& val, bool chunked) {
  constexpr cudaDataType kType = value_type<T>();
  const cusparseOperation_t kN = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const T one = 1, zero = 0;
  ptr.resize(static_cast<std::size_t>(A.rows) + 1);
  DeviceArray<unsigned char> buffer1, buffer2;
  std::unique_ptr<SpgemmDescriptors> d;
  cusparseSpGEMMAlg_t alg = chunked ? CUSPARSE_SPGEMM_ALG3 : CUSPARSE_SPGEMM_DEFAULT;
  for (;;) {
    d = std::make_unique<SpgemmDescriptors>();
    check(cusparseCreateConstCsr(&d->a, A.rows, a_cols, A.nnz, A.ptr, A.col, A.val,
                                 CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                 kType),
          "cusparseCreateConstCsr (SpGEMM A)");
    check(cusparseCreateConstCsr(&d->b, B.rows, b_cols, B.nnz, B.ptr, B.col, B.val,
                                 CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                 kType),
          "cusparseCreateConstCsr (SpGEMM B)");
    check(
        cusparseCreateCsr(&d->c, A.rows, b_cols, 0, ptr.data(), nullptr, nullptr,
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, kType),
        "cusparseCreateCsr (SpGEMM C)");
    check(cusparseSpGEMM_createDescr(&d->op), "cusparseSpGEMM_createDescr");
    if (spgemm_phases(handle, *d, kType, alg, &one, &zero, buffer1, buffer2)) break;
    alg = CUSPARSE_SPGEMM_ALG3;  // ALG3 raises rather than returning false.
  }
  int64_t rows = 0, cols = 0, nnz = 0;
  check(cusparseSpMatGetSize(d->c, &rows, &cols, &nnz), "cusparseSpMatGetSize (SpGEMM C)");
  col.resize(nnz > 0 ? nnz : 1);
  val.resize(nnz > 0 ? nnz : 1);
  check(cusparseCsrSetPointers(d->c, ptr.data(), col.data(), val.data()),
        "cusparseCsrSetPointers (SpGEMM C)");
  check(cusparseSpGEMM_copy(handle, kN, kN, &one, d->a, d->b, &zero, d->c, kType, alg, d->op),
        "cusparseSpGEMM_copy");
  const Index n = static_cast<Index>(nnz);
  if (n > 0 && !device_pattern_is_canonical(A.rows, b_cols, ptr.data(), n, col.data(), nullptr)) {
    sort_rows<T>(A.rows, n, ptr.data(), col, val);
  }
}

template <class T>
void device_galerkin(cusparseHandle_t handle, const DeviceCsrView<T>& R, const DeviceCsrView<T>& A,
                     const DeviceCsrView<T>& P, Index nc, DeviceArray<Index>& ptr,
                     DeviceArray<Index>& col, DeviceArray<T>& val) {
  DeviceArray<Index> ap_ptr, ap_col;
  DeviceArray<T> ap_val;
  device_spgemm(handle, A, A.rows, P, nc, ap_ptr, ap_col, ap_val);
  Index ap_nnz = 0;
  check(cudaMemcpy(&ap_nnz, ap_ptr.data() + A.rows, sizeof(Index), cudaMemcpyDeviceToHost),
        "cudaMemcpy (Galerkin)");
  const DeviceCsrView<T> AP{A.rows, ap_nnz, ap_ptr.data(), ap_col.data(), ap_val.data()};
  device_spgemm(handle, R, A.rows, AP, nc, ptr, col, val);
}

template void device_spgemm(cusparseHandle_t, const DeviceCsrView<float>&, Index,
                            const DeviceCsrView<float>&, Index, DeviceArray<Index>&,
                            DeviceArray<Index>&, DeviceArray<float>&, bool);
template void device_spgemm(cusparseHandle_t, const DeviceCsrView<double>&, Index,
                            const DeviceCsrView<double>&, Index, DeviceArray<Index>&,
                            DeviceArray<Index>&, DeviceArray<double>&, bool);
template void device_galerkin(cusparseHandle_t, const DeviceCsrView<float>&,
                              const DeviceCsrView<float>&, const DeviceCsrView<float>&, Index,
                              DeviceArray<Index>&, DeviceArray<Index>&, DeviceArray<float>&);
template void device_galerkin(cusparseHandle_t, const DeviceCsrView<double>&,
                              const DeviceCsrView<double>&, const DeviceCsrView<double>&, Index,
                              DeviceArray<Index>&, DeviceArray<Index>&, DeviceArray<double>&);

}  // namespace jaxamg::cuda
