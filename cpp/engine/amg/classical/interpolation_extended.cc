// Extended+i interpolation (De Sterck, Falgout, Nolting, Yang, "Distance-two
// interpolation for parallel algebraic multigrid", NLAA 2008). For an F point
// i with strong C neighbours C_i and strong F neighbours F_i, the
// interpolation set is  Ĉ_i = C_i ∪ (∪_{k in F_i} C_k)  and
//   w_ij = -(a_ij + sum_{k in F_i} a_ik â_kj / s_k) / ã_ii,   j in Ĉ_i
//   ã_ii = a_ii + sum_{weak n not in Ĉ_i} a_in + sum_{k in F_i} a_ik â_ki / s_k
//   s_k  = sum_{l in Ĉ_i ∪ {i}} â_kl
// with â_kl = a_kl where its sign is opposite to a_kk and 0 otherwise. Every
// coupling of row i is either kept, distributed over Ĉ_i ∪ {i} or lumped into
// the diagonal, so the weights sum to one on rows of zero row sum. A strong F
// neighbour with s_k = 0 has nothing to distribute to and is lumped.
#include <algorithm>

#include "amg/classical/assemble.h"
#include "amg/classical/interpolation.h"

namespace jaxamg::classical {

namespace {

// Per stored entry (k, l) of A, what the row builder asks about it, packed
// in one byte so the inner loops read neither cf[l] nor a_kk.
enum : uint8_t {
  kStrong = 1,    // l is a strong dependence of k
  kToC = 2,       // l is a C point
  kOpposite = 4,  // a_kl has the sign opposite to a_kk (â_kl = a_kl)
};

template <class T>
std::vector<uint8_t> entry_flags(const InterpolationInput<T>& in) {
  const CsrMatrix<T>& A = in.A;
  std::vector<uint8_t> flags(A.nnz(), 0);
#pragma omp parallel for schedule(static)
  for (Index k = 0; k < A.nrows; ++k) {
    if (in.cf[k] == kCoarse) continue;  // only F rows are ever read
    const bool neg_diag = in.diag_pos[k] >= 0 && A.val[in.diag_pos[k]] < T(0);
    for (Index l = A.row_ptr[k]; l < A.row_ptr[k + 1]; ++l) {
      const Index m = A.col[l];
      uint8_t f = 0;
      if (m != k) {
        if (in.strong[l]) f |= kStrong;
        if (in.cf[m] == kCoarse) f |= kToC;
        if (neg_diag ? A.val[l] > T(0) : A.val[l] < T(0)) f |= kOpposite;
      }
      flags[l] = f;
    }
  }
  return flags;
}

}  // namespace

template <class T>
void extended_i_interpolation(const InterpolationInput<T>& in, const Truncation& trunc,
                              const CsrMatrix<T>* pattern, CsrMatrix<T>& P) {
  const CsrMatrix<T>& A = in.A;
  const Index n = A.nrows;
  const std::vector<uint8_t> flags = entry_flags(in);

  struct Builder {
    const InterpolationInput<T>& in;
    const uint8_t* flags;
    // Position in the row of each fine point of Ĉ_i (-1 if not in it), reset
    // after each row through `touched`.
    std::vector<Index> pos;
    std::vector<Index> touched;
    // Couplings a_kl of the strong F neighbours k that may receive a share
    // of a_ik (sign opposite to a_kk, l a C point or i itself), gathered in
    // the same pass that builds Ĉ_i so each row k is read once; -1 ends the
    // couplings of one neighbour.
    std::vector<Index> share_pt;
    std::vector<double> share_val;

    void add(Index j, std::vector<RowEntry>& row) {
      if (pos[j] >= 0) return;
      pos[j] = static_cast<Index>(row.size());
      row.push_back({in.coarse_index[j], 0.0});
      touched.push_back(j);
    }

    void operator()(Index i, std::vector<RowEntry>& row) {
      const CsrMatrix<T>& A = in.A;
      const Index* col = A.col.data();
      const T* val = A.val.data();
      const Index b = A.row_ptr[i], e = A.row_ptr[i + 1];
      Index* spt = share_pt.data();
      double* sval = share_val.data();
      std::size_t ns = 0;
      for (Index k = b; k < e; ++k) {
        const uint8_t fk = flags[k];
        if (!(fk & kStrong)) continue;
        const Index j = col[k];
        if (fk & kToC) {
          add(j, row);
          continue;
        }
        const std::size_t need = ns + (A.row_ptr[j + 1] - A.row_ptr[j]) + 1;
        if (need > share_pt.size()) {
          share_pt.resize(2 * need);
          share_val.resize(2 * need);
          spt = share_pt.data();
          sval = share_val.data();
        }
        for (Index l = A.row_ptr[j]; l < A.row_ptr[j + 1]; ++l) {
          const uint8_t fl = flags[l];
          if ((fl & (kStrong | kToC)) == (kStrong | kToC)) add(col[l], row);
          if ((fl & kOpposite) && ((fl & kToC) || col[l] == i)) {
            spt[ns] = col[l];
            sval[ns++] = static_cast<double>(val[l]);
          }
        }
        spt[ns++] = -1;
      }
      if (!row.empty()) distribute(i, row);
      for (Index j : touched) pos[j] = -1;
      touched.clear();
    }

    void distribute(Index i, std::vector<RowEntry>& row) {
      const CsrMatrix<T>& A = in.A;
      const Index* col = A.col.data();
      const T* val = A.val.data();
      const Index* spt = share_pt.data();
      const double* sval = share_val.data();
      double diag = in.diag_pos[i] >= 0 ? static_cast<double>(val[in.diag_pos[i]]) : 0.0;
      std::size_t next = 0;  // start of the current F neighbour's couplings
      for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
        const Index j = col[k];
        if (j == i) continue;
        const double a = static_cast<double>(val[k]);
        const uint8_t fk = flags[k];
        if (pos[j] >= 0) {
          row[pos[j]].val += a;
        } else if ((fk & kStrong) && !(fk & kToC)) {
          const std::size_t first = next;
          double sum = 0;
          for (; spt[next] >= 0; ++next) {
            const Index m = spt[next];
            if (pos[m] >= 0 || m == i) sum += sval[next];
          }
          const std::size_t last = next++;
          if (sum == 0) {
            diag += a;
            continue;
          }
          const double d = a / sum;
          for (std::size_t q = first; q < last; ++q) {
            const Index m = spt[q];
            if (pos[m] >= 0) {
              row[pos[m]].val += d * sval[q];
            } else if (m == i) {
              diag += d * sval[q];
            }
          }
        } else {
          diag += a;
        }
      }
      if (diag == 0) {
        row.clear();
        return;
      }
      for (RowEntry& r : row) r.val = -r.val / diag;
    }
  };
  auto make_builder = [&]() {
    return Builder{in, flags.data(), std::vector<Index>(n, -1), {}, std::vector<Index>(256),
                   std::vector<double>(256)};
  };
  assemble_prolongation(n, in.n_coarse, in.cf, in.coarse_index, trunc, pattern, make_builder, P);
}

template void extended_i_interpolation(const InterpolationInput<float>&, const Truncation&,
                                       const CsrMatrix<float>*, CsrMatrix<float>&);
template void extended_i_interpolation(const InterpolationInput<double>&, const Truncation&,
                                       const CsrMatrix<double>*, CsrMatrix<double>&);

}  // namespace jaxamg::classical
