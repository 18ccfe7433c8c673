#include "backend/cpu/spgemm.h"

#include <omp.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "backend/cpu/block_galerkin.h"
#include "core/error.h"

namespace jaxamg::cpu {

namespace {

// The per-product callbacks must be inlined into the row loops: a call per
// product costs more than the product.
#if defined(__GNUC__)
#define JAXAMG_INLINE __attribute__((always_inline))
#else
#define JAXAMG_INLINE
#endif

// Below this many scalar multiply-adds the fork/join costs more than the work.
constexpr std::int64_t kParallelMinFlops = 50000;
// Chunks per thread: rows are handed out dynamically in cost-balanced chunks
// so that a thread slowed by another process does not hold the others back.
constexpr int kChunksPerThread = 8;

void check_shapes(Index a_rows, Index a_cols, Index b_rows, Index b_cols, const char* who) {
  if (a_cols != b_rows) {
    throw InvalidInput(std::string(who) + ": inner dimensions differ (A is " +
                       std::to_string(a_rows) + " x " + std::to_string(a_cols) + ", B is " +
                       std::to_string(b_rows) + " x " + std::to_string(b_cols) +
                       "); pass B with as many rows as A has columns");
  }
}

// The products of one output row, enumerated as (column, value) pairs with
// repeats: the drivers below merge them. A product type provides rows(),
// cols(), cost(i) (a measure of the work of row i, for load balance), a
// per-thread Scratch (make_scratch(chunk_begin), sized by the calling thread
// for every chunk, so that the workers allocate nothing that outlives the
// product in their own allocator arenas) and
//   row(i, scratch, begin, emit):
// it calls begin(bound) once, with an upper bound on the number of pairs it
// will emit, then emit(j, v) for every pair.

// C = A B.
template <class T>
struct ProductAB {
  const CsrMatrix<T>& A;
  const CsrMatrix<T>& B;
  struct Scratch {};
  Index rows() const { return A.nrows; }
  Index cols() const { return B.ncols; }
  Scratch make_scratch(const std::vector<Index>&) const { return {}; }
  void begin_chunk(Scratch&, Index, Index) const {}
  std::int64_t cost(Index i) const {
    std::int64_t c = 0;
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      c += B.row_ptr[A.col[k] + 1] - B.row_ptr[A.col[k]];
    }
    return c;
  }
  // Loop bounds are read into locals: the emit callback stores through
  // Index pointers, which the compiler must otherwise assume alias them.
  template <class Begin, class Emit>
  JAXAMG_INLINE void row(Index i, Scratch&, Begin&& begin, Emit&& emit) const {
    const Index* brp = B.row_ptr.data();
    const Index* bci = B.col.data();
    const T* bv = B.val.data();
    const Index k0 = A.row_ptr[i], k1 = A.row_ptr[i + 1];
    std::int64_t bound = 0;
    for (Index k = k0; k < k1; ++k) bound += brp[A.col[k] + 1] - brp[A.col[k]];
    begin(bound);
    for (Index k = k0; k < k1; ++k) {
      const Index c = A.col[k];
      const T a = A.val[k];
      const Index q1 = brp[c + 1];
      for (Index q = brp[c]; q < q1; ++q) emit(bci[q], a * bv[q]);
    }
  }
};

// Ac = R A P row by row, without forming A P or R A as matrices: row I of
// R A is first merged in a dense accumulator over the fine points, then each
// of its entries (I, k) emits (R A)_Ik P_k. Merging R A first pays off
// because a fine point k is reached from many points of row I of R (through
// the stencil of A): on 3D Poisson hierarchies it removes 40-60% of the
// multiply-adds of the plain triple loop, most on aggressive levels, whose
// rows of R are long.
template <class T>
struct ProductRAP {
  const CsrMatrix<T>& R;
  const CsrMatrix<T>& A;
  const CsrMatrix<T>& P;
  Index a_max_row;  // longest row of A
  Index p_max_row;  // longest row of P
  Index a_band;     // largest |j - i| over the entries (i, j) of A
  // Per thread: mark[k - lo] = last row I that reached fine point k, acc[k -
  // lo] its (R A)_Ik (zero outside the current row), list the points of the
  // row. The arrays cover only the fine points a chunk of rows can reach,
  // [lo, lo + size): on a banded ordering (grids) a small window instead of
  // the whole fine level. Moving the window needs no reset: acc is zero
  // between rows and a stale mark never equals the current row.
  struct Scratch {
    std::vector<Index> mark;
    std::vector<T> acc;
    std::vector<Index> list;
    Index lo = 0;
  };
  ProductRAP(const CsrMatrix<T>& r, const CsrMatrix<T>& a, const CsrMatrix<T>& p)
      : R(r), A(a), P(p), a_max_row(max_row(a)), p_max_row(max_row(p)), a_band(band(a)) {}
  static Index max_row(const CsrMatrix<T>& M) {
    Index m = 0;
    const Index* rp = M.row_ptr.data();
#pragma omp parallel for reduction(max : m) schedule(static) if (M.nrows > 100000)
    for (Index i = 0; i < M.nrows; ++i) m = std::max(m, rp[i + 1] - rp[i]);
    return m;
  }
  static Index band(const CsrMatrix<T>& M) {  // columns are sorted
    Index b = 0;
    const Index* rp = M.row_ptr.data();
    const Index* ci = M.col.data();
#pragma omp parallel for reduction(max : b) schedule(static) if (M.nrows > 100000)
    for (Index i = 0; i < M.nrows; ++i) {
      if (rp[i + 1] > rp[i]) b = std::max({b, i - ci[rp[i]], ci[rp[i + 1] - 1] - i});
    }
    return b;
  }
  Index rows() const { return R.nrows; }
  Index cols() const { return P.ncols; }
  // Fine points [lo, hi] the rows [r0, r1) can reach: the columns of their
  // rows of R, widened by the band of A. False if the rows are empty.
  bool reach(Index r0, Index r1, Index& lo, Index& hi) const {
    const Index q0 = R.row_ptr[r0], q1 = R.row_ptr[r1];
    if (q0 == q1) return false;
    lo = hi = R.col[q0];
    for (Index q = q0; q < q1; ++q) {
      lo = std::min(lo, R.col[q]);
      hi = std::max(hi, R.col[q]);
    }
    lo = std::max<Index>(0, lo - a_band);
    hi = std::min<Index>(A.ncols - 1, hi + a_band);
    return true;
  }
  // Windows as wide as the widest chunk's.
  Scratch make_scratch(const std::vector<Index>& chunk_begin) const {
    std::size_t widest = 0;
    for (std::size_t c = 0; c + 1 < chunk_begin.size(); ++c) {
      Index lo, hi;
      if (reach(chunk_begin[c], chunk_begin[c + 1], lo, hi)) {
        widest = std::max(widest, static_cast<std::size_t>(hi - lo) + 1);
      }
    }
    return Scratch{std::vector<Index>(widest, -1), std::vector<T>(widest, T(0)),
                   std::vector<Index>(64), 0};
  }
  void begin_chunk(Scratch& s, Index r0, Index r1) const {
    Index lo, hi;
    if (!reach(r0, r1, lo, hi)) return;
    const std::size_t need = static_cast<std::size_t>(hi - lo) + 1;
    if (s.mark.size() < need) {
      s.mark.resize(need, -1);
      s.acc.resize(need, T(0));
    }
    s.lo = lo;
  }
  std::int64_t cost(Index I) const {
    std::int64_t c = 0;
    for (Index q = R.row_ptr[I]; q < R.row_ptr[I + 1]; ++q) {
      c += A.row_ptr[R.col[q] + 1] - A.row_ptr[R.col[q]];
    }
    return 2 * c;  // (about as many pairs follow in the second stage)
  }
  template <class Begin, class Emit>
  JAXAMG_INLINE void row(Index I, Scratch& s, Begin&& begin, Emit&& emit) const {
    const Index* __restrict arp = A.row_ptr.data();
    const Index* __restrict aci = A.col.data();
    const T* __restrict av = A.val.data();
    const Index* __restrict prp = P.row_ptr.data();
    const Index* __restrict pci = P.col.data();
    const T* __restrict pv = P.val.data();
    const Index* __restrict rci = R.col.data();
    const T* __restrict rv = R.val.data();
    // Window positions: fine point c sits at c - lo.
    const Index lo = s.lo;
    Index* __restrict mark = s.mark.data();
    T* __restrict acc = s.acc.data();
    const Index q0 = R.row_ptr[I], q1 = R.row_ptr[I + 1];
    // At most every entry of the rows of A reached is a new point.
    const std::size_t bound = static_cast<std::size_t>(q1 - q0) * a_max_row;
    if (s.list.size() < bound) s.list.resize(2 * bound);
    Index* __restrict list = s.list.data();
    // Stage 1: (R A)_I, branch-free (whether a point is new is unpredictable).
    // The rows of A (and below, of P) are scattered: each is fetched a few
    // entries ahead of its use.
    constexpr Index kAhead = 4;
    Index count = 0;
    for (Index q = q0; q < q1; ++q) {
      if (q + 2 * kAhead < q1) __builtin_prefetch(arp + rci[q + 2 * kAhead]);
      if (q + kAhead < q1) {
        const Index ia = arp[rci[q + kAhead]];
        __builtin_prefetch(aci + ia);
        __builtin_prefetch(av + ia);
      }
      const Index i = rci[q];
      const T r = rv[q];
      const Index k1 = arp[i + 1];
      for (Index k = arp[i]; k < k1; ++k) {
        const Index c = aci[k] - lo;
        list[count] = c;
        count += mark[c] != I;
        mark[c] = I;
        acc[c] += r * av[k];
      }
    }
    begin(static_cast<std::int64_t>(count) * p_max_row);
    // Stage 2: (R A)_Ik P_k.
    for (Index u = 0; u < count; ++u) {
      if (u + 2 * kAhead < count) __builtin_prefetch(prp + list[u + 2 * kAhead] + lo);
      if (u + kAhead < count) {
        const Index ip = prp[list[u + kAhead] + lo];
        __builtin_prefetch(pci + ip);
        __builtin_prefetch(pv + ip);
      }
      const Index c = list[u];
      const T ra = acc[c];
      acc[c] = T(0);
      const Index p1 = prp[c + lo + 1];
      for (Index p = prp[c + lo]; p < p1; ++p) emit(pci[p], ra * pv[p]);
    }
  }
};

// Rows [begin[c], begin[c+1]) form chunk c; chunks carry about equal cost.
struct RowChunks {
  std::vector<Index> begin;
  int threads = 1;
  int count() const { return static_cast<int>(begin.size()) - 1; }
};

template <class Product>
RowChunks plan_chunks(const Product& prod) {
  const Index n = prod.rows();
  std::vector<std::int64_t> cost(static_cast<std::size_t>(n) + 1, 0);
#pragma omp parallel for schedule(static) if (n > 20000)
  for (Index i = 0; i < n; ++i) cost[i + 1] = 1 + prod.cost(i);  // empty rows cost too
  RowChunks chunks;
  for (Index i = 0; i < n; ++i) cost[i + 1] += cost[i];
  const std::int64_t total = cost[n];
  const bool small = total < kParallelMinFlops;
  chunks.threads = small ? 1 : omp_get_max_threads();
  // One thread still runs several chunks: each chunk's buffers are freed as
  // they are copied into the product, so the product is held about once
  // and not twice (a single chunk as large as the product, then the copy).
  const int nchunks = small ? 1 : chunks.threads * kChunksPerThread;
  chunks.begin.resize(nchunks + 1);
  chunks.begin[0] = 0;
  for (int c = 1; c < nchunks; ++c) {
    const std::int64_t target = total * c / nchunks;
    const auto it = std::lower_bound(cost.begin(), cost.end(), target);
    chunks.begin[c] = std::max(chunks.begin[c - 1], static_cast<Index>(it - cost.begin()));
  }
  chunks.begin[nchunks] = n;
  return chunks;
}

// Storage of a Buffer: blocks of a page and more are mapped from the system
// directly, so that freeing them returns the memory at once (the chunks are
// allocated and freed by different worker threads, whose allocator arenas
// would otherwise keep it resident). A chunk's buffers are a few to a few
// hundred KiB: with a 1 MiB bound they stayed in the workers' arenas, 9 MiB
// of resident but free memory after the setup of a 2D convection-diffusion
// problem of 262,144 rows (1.5 MiB with a 128 KiB bound). A mapped block
// grows by remapping its pages, without a copy: the pages already written
// are not faulted in a second time.
#if defined(__linux__)
constexpr std::size_t kMapAbove = 4096;
#endif
struct BlockDeleter {
  std::size_t bytes = 0;  // mapped size, 0 for operator new
  void operator()(void* p) const {
    if (!p) return;
#if defined(__linux__)
    if (bytes) {
      munmap(p, bytes);
      return;
    }
#endif
    ::operator delete(p);
  }
};

template <class V>
std::unique_ptr<V[], BlockDeleter> allocate_block(std::size_t n) {
  const std::size_t bytes = n * sizeof(V);
#if defined(__linux__)
  if (bytes >= kMapAbove) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) return std::unique_ptr<V[], BlockDeleter>(static_cast<V*>(p), {bytes});
  }
#endif
  return std::unique_ptr<V[], BlockDeleter>(static_cast<V*>(::operator new(bytes)), {0});
}

// A growable array without value-initialisation: the kernels write every
// element they keep, so zero-filling would only cost memory bandwidth.
template <class V>
struct Buffer {
  std::unique_ptr<V[], BlockDeleter> data;
  std::size_t size = 0;
  std::size_t capacity = 0;
  void reserve(std::size_t want) {
    if (want <= capacity) return;
    const std::size_t cap = std::max(want, capacity * 2);
    if (!remap(cap)) {
      auto grown = allocate_block<V>(cap);
      std::copy(data.get(), data.get() + size, grown.get());
      data = std::move(grown);
    }
    capacity = cap;
  }
  // Gives back the unused capacity: a finished chunk then holds only its
  // rows while the others are still being computed. A mapped block has
  // nothing to give back: its pages past the rows were never written, so
  // they are not resident (and remapping would cost a system call).
  void shrink() {
    if (capacity == size || data.get_deleter().bytes != 0) return;
    const std::size_t keep = size > 0 ? size : 1;
    auto exact = allocate_block<V>(keep);
    std::copy(data.get(), data.get() + size, exact.get());
    data = std::move(exact);
    capacity = keep;
  }
  // Grows a mapped block to n entries by remapping (the kernel moves the
  // pages if it must). False if the block is not mapped; it is then
  // unchanged.
  bool remap(std::size_t n) {
#if defined(__linux__)
    const std::size_t old_bytes = data.get_deleter().bytes;
    const std::size_t bytes = n * sizeof(V);
    if (old_bytes == 0) return false;
    void* p = mremap(data.get(), old_bytes, bytes, MREMAP_MAYMOVE);
    if (p == MAP_FAILED) return false;
    (void)data.release();  // the old mapping is gone: remapped, not freed
    data = std::unique_ptr<V[], BlockDeleter>(static_cast<V*>(p), {bytes});
    return true;
#else
    (void)n;
    return false;
#endif
  }
  const V* begin() const { return data.get(); }
  const V* end() const { return data.get() + size; }
};

// Rows of a product are short (tens of entries): insertion sort beats
// std::sort there; long rows fall back to it.
inline void sort_columns(Index* b, Index* e) {
  if (e - b > 48) {
    std::sort(b, e);
    return;
  }
  for (Index* p = b + 1; p < e; ++p) {
    const Index v = *p;
    Index* q = p;
    while (q > b && *(q - 1) > v) {
      *q = *(q - 1);
      --q;
    }
    *q = v;
  }
}

// One pass producing the pattern (and with kValues the values) of a product.
// Each chunk writes its rows into its own buffers; the buffers are copied
// into place once the row offsets are known, so every product is visited
// once instead of twice (count, then fill). Per thread, a dense marker
// (mark[j] = last row that produced column j) collects the distinct columns
// and a dense accumulator sums the values. Both updates are branch-free:
// whether a column is new is data-dependent and unpredictable, and a
// mispredicted branch per product cost more than the product itself.
template <class T, bool kValues, class Product>
CsrMatrix<T> multiply(const Product& prod) {
  const Index n = prod.rows();
  const Index m = prod.cols();
  const RowChunks chunks = plan_chunks(prod);
  const int nchunks = chunks.count();
  std::vector<Buffer<Index>> chunk_col(nchunks);
  std::vector<Buffer<T>> chunk_val(kValues ? nchunks : 0);
  CsrMatrix<T> C(n, m);
  Index* crp = C.row_ptr.data();

  // Per-thread work arrays, allocated by the calling thread (memory a worker
  // thread allocates stays in its own allocator arena once freed).
  std::vector<std::vector<Index>> marks(chunks.threads, std::vector<Index>(m, -1));
  std::vector<std::vector<T>> accs(chunks.threads, std::vector<T>(kValues ? m : 0, T(0)));
  std::vector<typename Product::Scratch> scratches(chunks.threads, prod.make_scratch(chunks.begin));
#pragma omp parallel num_threads(chunks.threads)
  {
    const int tid = omp_get_thread_num();
    Index* __restrict mark = marks[tid].data();
    T* __restrict acc = accs[tid].data();  // zero outside the current row
    auto& scratch = scratches[tid];
#pragma omp for schedule(dynamic, 1)
    for (int c = 0; c < nchunks; ++c) {
      Buffer<Index>& cols = chunk_col[c];
      Buffer<T>* vals = kValues ? &chunk_val[c] : nullptr;
      const Index r0 = chunks.begin[c], r1 = chunks.begin[c + 1];
      prod.begin_chunk(scratch, r0, r1);
      cols.reserve(static_cast<std::size_t>(r1 - r0) * 8);
      if (kValues) vals->reserve(cols.capacity);
      for (Index i = r0; i < r1; ++i) {
        // The row's columns go straight to the end of the chunk's buffer; a
        // row has at most min(pairs, m) distinct columns.
        Index* row = nullptr;
        Index count = 0;
        prod.row(
            i, scratch,
            [&](std::int64_t pairs) JAXAMG_INLINE {
              const std::size_t most =
                  static_cast<std::size_t>(std::min<std::int64_t>(pairs, m));
              // +1: the branch-free append writes one slot past the last
              // distinct column before it knows whether the column is new.
              cols.reserve(cols.size + most + 1);
              if constexpr (kValues) vals->reserve(cols.size + most + 1);
              row = cols.data.get() + cols.size;
            },
            [&](Index j, T v) JAXAMG_INLINE {
              row[count] = j;
              count += mark[j] != i;
              mark[j] = i;
              if constexpr (kValues) acc[j] += v;
            });
        sort_columns(row, row + count);
        if constexpr (kValues) {
          T* out = vals->data.get() + cols.size;
          for (Index p = 0; p < count; ++p) {
            out[p] = acc[row[p]];
            acc[row[p]] = T(0);
          }
          vals->size = cols.size + count;
        }
        cols.size += count;
        crp[i + 1] = count;
      }
      cols.shrink();
      if (kValues) vals->shrink();
    }
  }

  std::int64_t total = 0;
  for (Index i = 0; i < n; ++i) {
    total += crp[i + 1];
    if (total > std::numeric_limits<Index>::max()) {
      throw InvalidInput("spgemm: the product has more than 2^31 - 1 entries; "
                         "it cannot be stored with 32-bit indices");
    }
    crp[i + 1] = static_cast<Index>(total);
  }
  // The chunks are appended in order to storage that is reserved but not yet
  // touched, each freed once copied: C's pages become resident as the
  // chunks' are returned, so the product is never held twice. (Zero-filling
  // C first and copying in parallel would hold both, for a copy that costs
  // little next to the product.)
  C.col.reserve(static_cast<std::size_t>(total));
  C.val.reserve(static_cast<std::size_t>(total));
  for (int c = 0; c < nchunks; ++c) {
    C.col.insert(C.col.end(), chunk_col[c].begin(), chunk_col[c].end());
    chunk_col[c] = Buffer<Index>();
    if constexpr (kValues) {
      C.val.insert(C.val.end(), chunk_val[c].begin(), chunk_val[c].end());
      chunk_val[c] = Buffer<T>();
    }
  }
  if constexpr (!kValues) C.val.resize(static_cast<std::size_t>(total));
  C.find_diagonal();
  return C;
}

// Values of a product into the pattern C already has. A product landing
// outside that pattern means an input changed sparsity: reported, not
// silently dropped.
template <class T, class Product>
void numeric(const Product& prod, CsrMatrix<T>& C, const char* who) {
  if (C.nrows != prod.rows() || C.ncols != prod.cols() ||
      static_cast<Index>(C.row_ptr.size()) != C.nrows + 1 || C.val.size() != C.col.size()) {
    throw InvalidInput(std::string(who) + ": the kept pattern is " + std::to_string(C.nrows) +
                       " x " + std::to_string(C.ncols) + " but the product is " +
                       std::to_string(prod.rows()) + " x " + std::to_string(prod.cols()) +
                       "; run the symbolic phase for these matrices");
  }
  const RowChunks chunks = plan_chunks(prod);
  const int nchunks = chunks.count();
  const Index* crp = C.row_ptr.data();
  const Index* cci = C.col.data();
  T* cv = C.val.data();
  Index outside_row = -1;

  std::vector<std::vector<Index>> positions(chunks.threads, std::vector<Index>(C.ncols, -1));
  std::vector<typename Product::Scratch> scratches(chunks.threads, prod.make_scratch(chunks.begin));
#pragma omp parallel num_threads(chunks.threads)
  {
    // pos[j] = position of column j in the current row of C, -1 elsewhere.
    std::vector<Index>& pos = positions[omp_get_thread_num()];
    auto& scratch = scratches[omp_get_thread_num()];
#pragma omp for schedule(dynamic, 1)
    for (int c = 0; c < nchunks; ++c) {
      prod.begin_chunk(scratch, chunks.begin[c], chunks.begin[c + 1]);
      for (Index i = chunks.begin[c]; i < chunks.begin[c + 1]; ++i) {
        for (Index p = crp[i]; p < crp[i + 1]; ++p) {
          pos[cci[p]] = p;
          cv[p] = T(0);
        }
        bool outside = false;
        prod.row(i, scratch, [](std::int64_t) {}, [&](Index j, T v) JAXAMG_INLINE {
          const Index p = pos[j];
          if (p < 0) {
            outside = true;
          } else {
            cv[p] += v;
          }
        });
        for (Index p = crp[i]; p < crp[i + 1]; ++p) pos[cci[p]] = -1;
        if (outside) {
#pragma omp critical(jaxamg_spgemm_outside)
          outside_row = std::max(outside_row, i);
        }
      }
    }
  }
  if (outside_row >= 0) {
    throw InvalidInput(std::string(who) + ": row " + std::to_string(outside_row) +
                       " of the product has an entry outside the kept pattern; the sparsity "
                       "of an input changed since the symbolic phase, so run a full product");
  }
}

template <class T>
void check_galerkin(const CsrMatrix<T>& R, const CsrMatrix<T>& A, const CsrMatrix<T>& P,
                    bool r_is_pt) {
  check_shapes(A.nrows, A.ncols, P.nrows, P.ncols, "Galerkin product A P");
  if (!r_is_pt) check_shapes(R.nrows, R.ncols, A.nrows, P.ncols, "Galerkin product R (A P)");
}

// Runs product(R) with the given R, or with P^T formed here when R is empty
// (the caller's way of saying R = P^T without forming it).
template <class T, class Product>
void with_restriction(const CsrMatrix<T>& R, const CsrMatrix<T>& P, bool r_is_pt,
                      Product product) {
  if (r_is_pt) {
    product(transpose(P));
  } else {
    product(R);
  }
}

}  // namespace

template <class T>
CsrMatrix<T> spgemm(const CsrMatrix<T>& A, const CsrMatrix<T>& B) {
  check_shapes(A.nrows, A.ncols, B.nrows, B.ncols, "spgemm");
  return multiply<T, true>(ProductAB<T>{A, B});
}

template <class T>
CsrMatrix<T> spgemm_symbolic(const CsrMatrix<T>& A, const CsrMatrix<T>& B) {
  check_shapes(A.nrows, A.ncols, B.nrows, B.ncols, "spgemm_symbolic");
  return multiply<T, false>(ProductAB<T>{A, B});
}

template <class T>
void spgemm_numeric(const CsrMatrix<T>& A, const CsrMatrix<T>& B, CsrMatrix<T>& C) {
  check_shapes(A.nrows, A.ncols, B.nrows, B.ncols, "spgemm_numeric");
  numeric(ProductAB<T>{A, B}, C, "spgemm_numeric");
}

template <class T>
void GalerkinProduct<T>::compute(const CsrMatrix<T>& R, const CsrMatrix<T>& A,
                                 const CsrMatrix<T>& P, CsrMatrix<T>& Ac, Index coarse_block) {
  const bool r_is_pt = R.nrows == 0 && R.ncols == 0;
  check_galerkin(r_is_pt ? P : R, A, P, r_is_pt);
  planned_ = false;
  block_ = coarse_block > 1 && block_galerkin(A, P, coarse_block, Ac) ? coarse_block : 1;
  if (block_ == 1) {
    with_restriction(R, P, r_is_pt, [&](const CsrMatrix<T>& Rr) {
      Ac = multiply<T, true>(ProductRAP<T>(Rr, A, P));
    });
  }
  planned_ = true;
}

template <class T>
void GalerkinProduct<T>::recompute(const CsrMatrix<T>& R, const CsrMatrix<T>& A,
                                   const CsrMatrix<T>& P, CsrMatrix<T>& Ac, Index coarse_block) {
  if (!planned_) {
    throw InvalidInput("Galerkin product: recompute needs the plan of a previous compute(); "
                       "call compute() first");
  }
  const bool r_is_pt = R.nrows == 0 && R.ncols == 0;
  check_galerkin(r_is_pt ? P : R, A, P, r_is_pt);
  if (block_ > 1) {
    if (coarse_block != block_) {
      throw InvalidInput("Galerkin product: recompute was given coarse_block " +
                         std::to_string(coarse_block) + " but the last compute() formed Ac on " +
                         std::to_string(block_) + " x " + std::to_string(block_) +
                         " blocks; pass the coarse_block of that compute()");
    }
    if (!block_galerkin_values(A, P, block_, Ac)) {
      throw InvalidInput("Galerkin product: the sparsity of A or P changed since the last "
                         "compute(), so the coarse pattern is not the kept one; run a full "
                         "setup");
    }
    return;
  }
  with_restriction(R, P, r_is_pt, [&](const CsrMatrix<T>& Rr) {
    numeric(ProductRAP<T>(Rr, A, P), Ac, "Galerkin product");
  });
}

template <class T>
void GalerkinProduct<T>::clear() {
  planned_ = false;
}

#define JAXAMG_INSTANTIATE(T)                                                             \
  template CsrMatrix<T> spgemm(const CsrMatrix<T>&, const CsrMatrix<T>&);                 \
  template CsrMatrix<T> spgemm_symbolic(const CsrMatrix<T>&, const CsrMatrix<T>&);        \
  template void spgemm_numeric(const CsrMatrix<T>&, const CsrMatrix<T>&, CsrMatrix<T>&);  \
  template class GalerkinProduct<T>;
JAXAMG_INSTANTIATE(float)
JAXAMG_INSTANTIATE(double)
#undef JAXAMG_INSTANTIATE

}  // namespace jaxamg::cpu
