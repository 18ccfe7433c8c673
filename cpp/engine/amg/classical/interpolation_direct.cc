// Direct interpolation (Stueben, "Algebraic multigrid (AMG): an
// introduction with applications", 1999): for an F point i with strong C
// neighbours C_i,
//   w_ij = -alpha_i a_ij / a_ii   (a_ij of sign opposite to a_ii)
//   w_ij = -beta_i  a_ij / a_ii   (a_ij of the diagonal's sign)
//   alpha_i = sum_{k != i} a_ik^- / sum_{k in C_i} a_ik^-,  beta_i likewise,
// where a^- / a^+ are the couplings of opposite / same sign as a_ii. If C_i
// has no coupling of one kind, that kind is lumped into the diagonal. Every
// coupling is accounted for, so the weights sum to -(row sum - a_ii) / a_ii.
#include "amg/classical/assemble.h"
#include "amg/classical/direct_weights.h"
#include "amg/classical/interpolation.h"

namespace jaxamg::classical {

template <class T>
void direct_interpolation(const InterpolationInput<T>& in, const Truncation& trunc,
                          const CsrMatrix<T>* pattern, CsrMatrix<T>& P) {
  const CsrMatrix<T>& A = in.A;
  auto make_builder = [&]() {
    return [&, w = std::vector<std::pair<Index, double>>()](
               Index i, std::vector<RowEntry>& row) mutable {
      w.clear();
      direct_weights(
          A, i, in.diag_pos[i],
          [&](Index k, Index j) { return in.strong[k] && in.cf[j] == kCoarse; }, w);
      for (auto [j, wj] : w) row.push_back({in.coarse_index[j], wj});
    };
  };
  assemble_prolongation(A.nrows, in.n_coarse, in.cf, in.coarse_index, trunc, pattern,
                        make_builder, P);
}

template void direct_interpolation(const InterpolationInput<float>&, const Truncation&,
                                   const CsrMatrix<float>*, CsrMatrix<float>&);
template void direct_interpolation(const InterpolationInput<double>&, const Truncation&,
                                   const CsrMatrix<double>*, CsrMatrix<double>&);

}  // namespace jaxamg::classical
