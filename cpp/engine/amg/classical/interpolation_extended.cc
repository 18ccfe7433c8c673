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

// The couplings of every F row k to C points, gathered once so that the row
// builder reads only those (the couplings between F points of a neighbour's
// row never enter a weight, except the one back to the row being built).
// C points are named by their coarse index:
//   strong[sp[k], sp[k+1]):   the strong C neighbours of k, in column order;
//   (ocol, oval)[op[k], op[k+1]): the couplings a_kl to C points l of sign
//     opposite to a_kk (â_kl != 0), in column order;
//   neg[k]: a_kk < 0.
struct CoarseCouplings {
  std::vector<Index> sp, strong, op, ocol;
  std::vector<double> oval;
  std::vector<uint8_t> neg;
  Index max_strong = 0;  // longest strong list
};

template <class T>
CoarseCouplings coarse_couplings(const InterpolationInput<T>& in) {
  const CsrMatrix<T>& A = in.A;
  const Index n = A.nrows;
  const Index* rp = A.row_ptr.data();
  const Index* col = A.col.data();
  const T* val = A.val.data();
  const int8_t* cf = in.cf.data();
  const uint8_t* st = in.strong.data();
  const Index* cidx = in.coarse_index.data();
  CoarseCouplings c;
  c.sp.assign(static_cast<std::size_t>(n) + 1, 0);
  c.op.assign(static_cast<std::size_t>(n) + 1, 0);
  c.neg.assign(n, 0);
  Index max_strong = 0;
#pragma omp parallel for schedule(static) reduction(max : max_strong) if (n > kSerialBelow)
  for (Index k = 0; k < n; ++k) {
    if (cf[k] == kCoarse) continue;  // only F rows are ever read
    const bool neg = in.diag_pos[k] >= 0 && val[in.diag_pos[k]] < T(0);
    c.neg[k] = neg;
    Index ns = 0, no = 0;
    const Index l1 = rp[k + 1];
    for (Index l = rp[k]; l < l1; ++l) {
      const Index m = col[l];
      if (m == k || cf[m] != kCoarse) continue;
      ns += st[l] != 0;
      no += neg ? val[l] > T(0) : val[l] < T(0);
    }
    c.sp[k + 1] = ns;
    c.op[k + 1] = no;
    max_strong = std::max(max_strong, ns);
  }
  c.max_strong = max_strong;
  for (Index k = 0; k < n; ++k) {
    c.sp[k + 1] += c.sp[k];
    c.op[k + 1] += c.op[k];
  }
  c.strong.resize(c.sp[n]);
  c.ocol.resize(c.op[n]);
  c.oval.resize(c.op[n]);
#pragma omp parallel for schedule(static) if (n > kSerialBelow)
  for (Index k = 0; k < n; ++k) {
    if (cf[k] == kCoarse) continue;
    const bool neg = c.neg[k];
    Index ps = c.sp[k], po = c.op[k];
    const Index l1 = rp[k + 1];
    for (Index l = rp[k]; l < l1; ++l) {
      const Index m = col[l];
      if (m == k || cf[m] != kCoarse) continue;
      if (st[l]) c.strong[ps++] = cidx[m];
      if (neg ? val[l] > T(0) : val[l] < T(0)) {
        c.ocol[po] = cidx[m];
        c.oval[po++] = static_cast<double>(val[l]);
      }
    }
  }
  return c;
}

template <class T>
struct ExtIBuilder {
  // Rows ahead for the prefetches below: on 3D Poisson (1M rows) 2 left the
  // loads of the neighbours' rows waiting, 8 overran on the long rows of the
  // coarser levels.
  static constexpr Index kAhead = 4;
  const InterpolationInput<T>& in;
  const CoarseCouplings& cc;
  // Position in the row of each C point of Ĉ_i, by coarse index (-1 if not
  // in it), reset after each row through `touched`, which lists Ĉ_i in order.
  std::vector<Index> pos;
  std::vector<Index> touched;
  std::vector<double> weight;  // weight[u]: accumulated coupling of touched[u]
  std::vector<double> back;    // per strong F neighbour k of i (in order): â_ki

  // Appends the (coarse column, weight) pairs of F row i, unsorted. Arrays
  // are read through local pointers and loop bounds held in locals, so the
  // stores into the work arrays cannot force reloads in the inner loops.
  void operator()(Index i, std::vector<RowEntry>& row) {
    const Index* rp = in.A.row_ptr.data();
    const Index* col = in.A.col.data();
    const T* val = in.A.val.data();
    const uint8_t* st = in.strong.data();
    const int8_t* cf = in.cf.data();
    const Index* cidx = in.coarse_index.data();
    const Index* sp = cc.sp.data();
    const Index* sc = cc.strong.data();
    // A row reads its strong F neighbours' rows of A (the coupling back to
    // it), their coupling lists and coarse numbers: as many streams as the
    // stencil has offsets, more than the hardware prefetchers follow. Rows
    // are built in increasing order, so these are fetched for a row a little
    // ahead: first the offsets, then (for a nearer row) the data.
    if (i + 2 * kAhead < in.A.nrows) {
      const Index r = i + 2 * kAhead;
      for (Index k = rp[r]; k < rp[r + 1]; ++k) {
        const Index j = col[k];
        __builtin_prefetch(cc.sp.data() + j);
        __builtin_prefetch(cc.op.data() + j);
        __builtin_prefetch(cidx + j);
      }
    }
    if (i + kAhead < in.A.nrows) {
      const Index r = i + kAhead;
      for (Index k = rp[r]; k < rp[r + 1]; ++k) {
        if (!st[k]) continue;
        const Index j = col[k];
        // The coupling back to i may sit in the row's last cache line.
        const Index last = std::max(rp[j], rp[j + 1] - 1);
        __builtin_prefetch(val + rp[j]);
        __builtin_prefetch(val + last);
        __builtin_prefetch(col + rp[j]);
        __builtin_prefetch(col + last);
        __builtin_prefetch(sc + sp[j]);
        __builtin_prefetch(cc.ocol.data() + cc.op[j]);
        __builtin_prefetch(cc.oval.data() + cc.op[j]);
      }
    }
    const Index b = rp[i], e = rp[i + 1];
    // Room for the worst case: every strong C neighbour of every neighbour.
    const std::size_t room =
        static_cast<std::size_t>(e - b) * (static_cast<std::size_t>(cc.max_strong) + 1);
    if (room > touched.size()) {
      touched.resize(2 * room);
      weight.resize(2 * room);
    }
    if (static_cast<std::size_t>(e - b) > back.size()) back.resize(2 * (e - b));
    Index* tch = touched.data();
    Index* ps = pos.data();
    double* bk = back.data();
    Index nt = 0, nf = 0;
    for (Index k = b; k < e; ++k) {
      if (!st[k]) continue;
      const Index j = col[k];
      if (cf[j] == kCoarse) {
        const Index c = cidx[j];
        if (ps[c] < 0) {
          ps[c] = nt;
          tch[nt++] = c;
        }
        continue;
      }
      const Index s1 = sp[j + 1];
      for (Index q = sp[j]; q < s1; ++q) {
        const Index c = sc[q];
        if (ps[c] < 0) {
          ps[c] = nt;
          tch[nt++] = c;
        }
      }
      // â_ji: the coupling back to i (columns are sorted; short rows are
      // searched by counting, without unpredictable branches).
      const Index l0 = rp[j], l1 = rp[j + 1];
      Index at;
      if (l1 - l0 <= 16) {
        Index below = 0;
        for (Index l = l0; l < l1; ++l) below += col[l] < i;
        at = l0 + below;
      } else {
        at = static_cast<Index>(std::lower_bound(col + l0, col + l1, i) - col);
      }
      double a_ji = 0.0;
      if (at < l1 && col[at] == i) {
        const T v = val[at];
        if (cc.neg[j] ? v > T(0) : v < T(0)) a_ji = static_cast<double>(v);
      }
      bk[nf++] = a_ji;
    }
    if (nt > 0) distribute(i, nt, row);
    for (Index u = 0; u < nt; ++u) ps[tch[u]] = -1;
  }

  void distribute(Index i, Index nt, std::vector<RowEntry>& row) {
    const Index* rp = in.A.row_ptr.data();
    const Index* col = in.A.col.data();
    const T* val = in.A.val.data();
    const uint8_t* st = in.strong.data();
    const int8_t* cf = in.cf.data();
    const Index* cidx = in.coarse_index.data();
    const Index* op = cc.op.data();
    const Index* ocol = cc.ocol.data();
    const double* oval = cc.oval.data();
    const Index* ps = pos.data();
    const double* bk = back.data();
    double* w = weight.data();
    for (Index u = 0; u < nt; ++u) w[u] = 0.0;
    double diag = in.diag_pos[i] >= 0 ? static_cast<double>(val[in.diag_pos[i]]) : 0.0;
    Index nf = 0;
    const Index e = rp[i + 1];
    for (Index k = rp[i]; k < e; ++k) {
      const Index j = col[k];
      if (j == i) continue;
      const double a = static_cast<double>(val[k]);
      if (cf[j] == kCoarse) {
        const Index u = ps[cidx[j]];
        if (u >= 0) {
          w[u] += a;
        } else {
          diag += a;
        }
      } else if (st[k]) {
        // s_j = sum of â_jl over Ĉ_i and i; a_ij is shared in proportion.
        const double a_ji = bk[nf++];
        const Index o0 = op[j], o1 = op[j + 1];
        double sum = 0;
        for (Index q = o0; q < o1; ++q) {
          if (ps[ocol[q]] >= 0) sum += oval[q];
        }
        sum += a_ji;
        if (sum == 0) {
          diag += a;
          continue;
        }
        const double d = a / sum;
        for (Index q = o0; q < o1; ++q) {
          const Index u = ps[ocol[q]];
          if (u >= 0) w[u] += d * oval[q];
        }
        diag += d * a_ji;
      } else {
        diag += a;
      }
    }
    if (diag == 0) return;
    const Index* tch = touched.data();
    const std::size_t base = row.size();
    row.resize(base + static_cast<std::size_t>(nt));
    RowEntry* out = row.data() + base;
    for (Index u = 0; u < nt; ++u) out[u] = {tch[u], -w[u] / diag};
  }
};

template <class T>
ExtIBuilder<T> make_ext_i_builder(const InterpolationInput<T>& in, const CoarseCouplings& cc) {
  return ExtIBuilder<T>{in,
                        cc,
                        std::vector<Index>(std::max<Index>(in.n_coarse, 1), -1),
                        std::vector<Index>(256),
                        std::vector<double>(256),
                        std::vector<double>(64)};
}

}  // namespace

template <class T>
void extended_i_interpolation(const InterpolationInput<T>& in, const Truncation& trunc,
                              const CsrMatrix<T>* pattern, CsrMatrix<T>& P) {
  const CsrMatrix<T>& A = in.A;
  const Index n = A.nrows;
  const CoarseCouplings cc = coarse_couplings(in);
  auto make_builder = [&]() { return make_ext_i_builder(in, cc); };
  assemble_prolongation(n, in.n_coarse, in.cf, in.coarse_index, trunc, pattern, make_builder, P,
                        in.skip_rows);
}

// Two-stage extended+i (see interpolation.h). With C1 the first-stage and C2
// the final C points: P1 (n x |C1|) is extended+i for the splitting C1 /
// rest; P2 (|C1| x |C2|) has identity rows on C2, and a point of C1 \ C2 (no
// strong C2 neighbour, as C1 points are not strongly connected, but one
// within distance two) gets its extended+i row for the splitting C2 / rest,
// which reaches C2 through its strong F neighbours. P = P1 P2 is formed row
// by row: the truncated row of P1 is computed and multiplied by the rows of
// P2 at once, so neither P1 nor the untruncated product is stored. Every
// stage keeps row sums, so P interpolates constants exactly wherever A has
// zero row sums.
template <class T>
void two_stage_interpolation(const InterpolationInput<T>& in,
                             const std::vector<int8_t>& first_stage, const Truncation& trunc,
                             const CsrMatrix<T>* pattern, CsrMatrix<T>& P) {
  const CsrMatrix<T>& A = in.A;
  const Index n = A.nrows;
  std::vector<Index> index1;
  const Index n1 = coarse_numbering(first_stage, index1);

  // P2 on the rows of C1 \ C2 (every other F row of the final splitting is
  // skipped), then compacted to |C1| rows.
  CsrMatrix<T> P2(n1, in.n_coarse);
  {
    std::vector<uint8_t> skip(n);
#pragma omp parallel for schedule(static) if (n > kSerialBelow)
    for (Index i = 0; i < n; ++i) skip[i] = first_stage[i] != kCoarse;
    InterpolationInput<T> in2{A, in.diag_pos, in.strong, in.cf, in.coarse_index, in.n_coarse};
    in2.skip_rows = skip.data();
    CsrMatrix<T> rows;
    extended_i_interpolation(in2, trunc, static_cast<const CsrMatrix<T>*>(nullptr), rows);
#pragma omp parallel for schedule(static) if (n > kSerialBelow)
    for (Index i = 0; i < n; ++i) {
      if (index1[i] >= 0) P2.row_ptr[index1[i] + 1] = rows.row_ptr[i + 1] - rows.row_ptr[i];
    }
    for (Index r = 0; r < n1; ++r) P2.row_ptr[r + 1] += P2.row_ptr[r];
    P2.col.resize(P2.row_ptr[n1]);
    P2.val.resize(P2.row_ptr[n1]);
#pragma omp parallel for schedule(static) if (n > kSerialBelow)
    for (Index i = 0; i < n; ++i) {
      const Index r = index1[i];
      if (r < 0) continue;
      std::copy(rows.col.begin() + rows.row_ptr[i], rows.col.begin() + rows.row_ptr[i + 1],
                P2.col.begin() + P2.row_ptr[r]);
      std::copy(rows.val.begin() + rows.row_ptr[i], rows.val.begin() + rows.row_ptr[i + 1],
                P2.val.begin() + P2.row_ptr[r]);
    }
  }

  const InterpolationInput<T> in1{A, in.diag_pos, in.strong, first_stage, index1, n1};
  const CoarseCouplings cc1 = coarse_couplings(in1);
  struct Builder {
    ExtIBuilder<T> stage1;
    const std::vector<int8_t>& first_stage;
    const std::vector<Index>& index1;
    const CsrMatrix<T>& P2;
    const Truncation& trunc;
    std::vector<RowEntry> row1, scratch;

    void operator()(Index i, std::vector<RowEntry>& row) {
      if (first_stage[i] == kCoarse) {  // C1 \ C2: the row of P2
        const Index r = index1[i];
        for (Index q = P2.row_ptr[r]; q < P2.row_ptr[r + 1]; ++q)
          row.push_back({P2.col[q], static_cast<double>(P2.val[q])});
        return;
      }
      row1.clear();
      stage1(i, row1);
      // The rows of P2 the product reads are scattered: their offsets are
      // fetched while the row is truncated.
      for (const RowEntry& e : row1) __builtin_prefetch(P2.row_ptr.data() + e.col);
      // (The row is combined with P2 below and sorted afterwards: it is
      // truncated in the order it was built.)
      truncate_row(row1, trunc, scratch);
      // Rows are short (at most a few dozen products): merge by linear search.
      for (const RowEntry& e : row1) {
        for (Index q = P2.row_ptr[e.col]; q < P2.row_ptr[e.col + 1]; ++q) {
          const Index c = P2.col[q];
          const double v = e.val * static_cast<double>(P2.val[q]);
          std::size_t u = 0;
          while (u < row.size() && row[u].col != c) ++u;
          if (u == row.size()) {
            row.push_back({c, v});
          } else {
            row[u].val += v;
          }
        }
      }
    }
  };
  auto make_builder = [&]() {
    return Builder{make_ext_i_builder(in1, cc1), first_stage, index1, P2, trunc, {}, {}};
  };
  assemble_prolongation(n, in.n_coarse, in.cf, in.coarse_index, trunc, pattern, make_builder, P);
}

template void extended_i_interpolation(const InterpolationInput<float>&, const Truncation&,
                                       const CsrMatrix<float>*, CsrMatrix<float>&);
template void extended_i_interpolation(const InterpolationInput<double>&, const Truncation&,
                                       const CsrMatrix<double>*, CsrMatrix<double>&);

template void two_stage_interpolation(const InterpolationInput<float>&,
                                      const std::vector<int8_t>&, const Truncation&,
                                      const CsrMatrix<float>*, CsrMatrix<float>&);
template void two_stage_interpolation(const InterpolationInput<double>&,
                                      const std::vector<int8_t>&, const Truncation&,
                                      const CsrMatrix<double>*, CsrMatrix<double>&);

}  // namespace jaxamg::classical
