// libFuzzer target: arbitrary bytes as a small linear system, solved through
// LinearSolver<double> (api/linear_solver.h) with one of a few configurations.
//
// Input layout (missing bytes read as 0):
//   byte 0   configuration, index into kConfigs (mod its size)
//   byte 1   flags: 1 transposed solve first, 2 use x as initial guess,
//            4 raw mode, 8 make the diagonal dominant (structured mode),
//            16 resetup with scaled values, 32 replace_values,
//            64 a right-hand side of the wrong size, 128 block_dim 2
//   byte 2   n = 1 + byte % 64 rows
//   byte 3   m, the number of entries
//   then, structured mode: m triples (row byte, column byte, value byte): the
//            row and column are taken mod n (except column byte 255, which is
//            out of range), the value from a table that holds 0, tiny, huge
//            and negative numbers; entries come in the given order, so rows
//            are unsorted and hold duplicates;
//         raw mode: n + 1 row offsets (int16), m column indices (int16) and m
//            values (raw 8-byte doubles: NaN, Inf, denormals included);
//   the rest: the right-hand side, one byte per entry from the value table
//            (1 where the input ran out).
//
// setup -> solve (transposed too) must either throw one of the engine's error
// types or return a status, and x must be finite when the status is SUCCESS.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/linear_solver.h"
#include "core/error.h"

namespace {

using jaxamg::Index;

// Small iteration counts keep one input fast; every outer solver monitors its
// residual so that the status is meaningful.
const char* const kConfigs[] = {
    // PCG + classical AMG (PMIS, D2, block Jacobi, dense LU on the coarsest level).
    R"({"config_version": 2, "solver": {"scope": "main", "solver": "PCG", "max_iters": 8,
        "tolerance": 1e-8, "convergence": "RELATIVE_INI", "monitor_residual": 1,
        "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "CLASSICAL",
          "selector": "PMIS", "interpolator": "D2", "max_iters": 1, "min_coarse_rows": 2,
          "smoother": {"scope": "jacobi", "solver": "BLOCK_JACOBI", "relaxation_factor": 0.8},
          "coarse_solver": "DENSE_LU_SOLVER"}}})",
    // FGMRES + aggregation AMG (SIZE_2, multicolor DILU).
    R"({"config_version": 2, "solver": {"scope": "main", "solver": "FGMRES", "max_iters": 8,
        "gmres_n_restart": 4, "tolerance": 1e-8, "convergence": "RELATIVE_INI",
        "monitor_residual": 1,
        "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "AGGREGATION",
          "selector": "SIZE_2", "max_iters": 1, "min_coarse_rows": 2, "postsweeps": 2,
          "smoother": "MULTICOLOR_DILU", "coarse_solver": "DENSE_LU_SOLVER"}}})",
    // PBICGSTAB + JACOBI_L1.
    R"({"config_version": 2, "solver": {"scope": "main", "solver": "PBICGSTAB", "max_iters": 8,
        "tolerance": 1e-8, "convergence": "RELATIVE_INI", "monitor_residual": 1,
        "preconditioner": {"scope": "l1", "solver": "JACOBI_L1", "max_iters": 2}}})",
    // GMRES + dense LU.
    R"({"config_version": 2, "solver": {"scope": "main", "solver": "GMRES", "max_iters": 8,
        "gmres_n_restart": 3, "tolerance": 1e-8, "convergence": "RELATIVE_INI",
        "monitor_residual": 1,
        "preconditioner": {"scope": "lu", "solver": "DENSE_LU_SOLVER"}}})",
    // Classical AMG as the solver: HMIS + aggressive level, W cycle, GS smoother.
    R"({"config_version": 2, "solver": {"scope": "amg", "solver": "AMG",
        "algorithm": "CLASSICAL", "selector": "HMIS", "aggressive_levels": 1,
        "interpolator": "D1", "cycle": "W", "max_iters": 4, "min_coarse_rows": 2,
        "tolerance": 1e-8, "monitor_residual": 1,
        "smoother": {"scope": "gs", "solver": "GS", "symmetric_GS": 1}}})",
    // PCGF + aggregation AMG (SIZE_4, Chebyshev smoother, F cycle).
    R"({"config_version": 2, "solver": {"scope": "main", "solver": "PCGF", "max_iters": 8,
        "tolerance": 1e-8, "convergence": "RELATIVE_INI", "monitor_residual": 1,
        "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "AGGREGATION",
          "selector": "SIZE_4", "cycle": "F", "max_iters": 1, "min_coarse_rows": 2,
          "smoother": {"scope": "cheb", "solver": "CHEBYSHEV",
                       "chebyshev_polynomial_order": 2}}}})",
    // IDR + multicolor ILU.
    R"({"config_version": 2, "solver": {"scope": "main", "solver": "IDR", "max_iters": 8,
        "subspace_dim_s": 2, "tolerance": 1e-8, "monitor_residual": 1,
        "preconditioner": {"scope": "ilu", "solver": "MULTICOLOR_ILU"}}})",
    // CG, unpreconditioned, with the combined stopping rule.
    R"({"config_version": 2, "solver": {"scope": "main", "solver": "CG", "max_iters": 8,
        "tolerance": 1e-8, "convergence": "COMBINED_REL_INI_ABS", "monitor_residual": 1}})",
    // BICGSTAB preconditioned by Chebyshev polynomial (legacy text).
    "config_version=2, solver(main)=PBICGSTAB, main:max_iters=8, main:monitor_residual=1, "
    "main:tolerance=1e-8, main:preconditioner(cheb)=CHEBYSHEV_POLY",
    // Classical AMG with D2 two-stage interpolation, multicolor GS, MULTIPASS on
    // an aggressive level, as a FGMRES preconditioner.
    R"({"config_version": 2, "solver": {"scope": "main", "solver": "FGMRES", "max_iters": 6,
        "gmres_n_restart": 6, "tolerance": 1e-8, "monitor_residual": 1,
        "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "CLASSICAL",
          "selector": "PMIS", "interpolator": "D2_TWO_STAGE", "aggressive_levels": 1,
          "aggressive_interpolator": "MULTIPASS", "max_iters": 1, "min_coarse_rows": 2,
          "smoother": "MULTICOLOR_GS"}}})",
    // Aggregation AMG as the solver, smoothed aggregation, V cycle, JACOBI_L1.
    R"({"config_version": 2, "solver": {"scope": "amg", "solver": "AMG",
        "algorithm": "AGGREGATION", "selector": "SIZE_8", "x_smoothed_aggregation": 1,
        "max_iters": 4, "min_coarse_rows": 2, "tolerance": 1e-8, "monitor_residual": 1,
        "smoother": "JACOBI_L1"}})",
};
constexpr size_t kNumConfigs = sizeof(kConfigs) / sizeof(kConfigs[0]);

const double kValues[16] = {0.0,   1.0,     -1.0,    2.0,  -2.0, 4.0,    0.5,   1e-300,
                            -1e-3, 1e300,   -1e300,  1e-8, 3.0,  -0.25,  10.0,  1e150};

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  int16_t i16() {
    const uint16_t lo = byte(), hi = byte();
    return static_cast<int16_t>(lo | (hi << 8));
  }
  double f64() {
    uint8_t b[8];
    for (uint8_t& c : b) c = byte();
    double d;
    std::memcpy(&d, b, sizeof d);
    return d;
  }
  bool empty() const { return pos_ >= size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

[[noreturn]] void fail(const char* what, int config) {
  std::fprintf(stderr, "fuzz_solve: %s (config %d)\n", what, config);
  std::abort();
}

template <class F>
void expect_engine_errors_only(F&& f) {
  try {
    f();
  } catch (const jaxamg::InvalidInput&) {
  } catch (const jaxamg::ConfigError&) {
  } catch (const jaxamg::NotSupported&) {
  } catch (const jaxamg::SetupError&) {
  } catch (const std::invalid_argument&) {
  }
  // Anything else escapes and libFuzzer reports it as a crash.
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  // Every configuration must be accepted: a typo here would hide all solves.
  for (size_t c = 0; c < kNumConfigs; ++c) {
    try {
      jaxamg::LinearSolver<double> probe(kConfigs[c]);
      (void)probe;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fuzz_solve: configuration %zu is invalid: %s\n", c, e.what());
      std::abort();
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in(data, size);
  const int config = in.byte() % kNumConfigs;
  const uint8_t flags = in.byte();
  const Index n = 1 + in.byte() % 64;
  const Index m = in.byte();

  std::vector<Index> row_ptr(n + 1, 0), col;
  std::vector<double> val;
  if (flags & 4) {
    for (Index i = 0; i <= n; ++i) row_ptr[i] = in.i16();
    for (Index k = 0; k < m; ++k) col.push_back(in.i16());
    for (Index k = 0; k < m; ++k) val.push_back(in.f64());
  } else {
    struct Entry { Index r, c; double v; };
    std::vector<Entry> entries;
    for (Index k = 0; k < m; ++k) {
      const uint8_t r = in.byte(), c = in.byte(), v = in.byte();
      entries.push_back({r % n, c == 255 ? n : c % n, kValues[v % 16]});
    }
    if (flags & 8) {
      std::vector<double> dominance(n, 1.0);
      for (const Entry& e : entries) dominance[e.r] += std::fabs(e.v);
      for (Index i = 0; i < n; ++i) entries.push_back({i, i, dominance[i]});
    }
    // Counting sort by row, stable: the order within a row is the input's.
    for (const Entry& e : entries) ++row_ptr[e.r + 1];
    for (Index i = 0; i < n; ++i) row_ptr[i + 1] += row_ptr[i];
    col.resize(entries.size());
    val.resize(entries.size());
    std::vector<Index> next(row_ptr.begin(), row_ptr.end() - 1);
    for (const Entry& e : entries) {
      col[next[e.r]] = e.c;
      val[next[e.r]++] = e.v;
    }
  }
  const Index nnz = static_cast<Index>(col.size());

  std::vector<double> b(n, 1.0);
  for (Index i = 0; i < n && !in.empty(); ++i) b[i] = kValues[in.byte() % 16];
  const Index b_size = (flags & 64) ? n + 1 : n;
  if (flags & 64) b.push_back(1.0);

  expect_engine_errors_only([&] {
    jaxamg::LinearSolver<double> solver(kConfigs[config]);
    solver.setup(n, row_ptr.data(), col.data(), val.data(), nnz, (flags & 128) ? 2 : 1);
    auto solve = [&](bool transpose) {
      std::vector<double> x(n, 0.5);
      const jaxamg::SolveResult r =
          solver.solve(b.data(), x.data(), b_size, (flags & 2) != 0, transpose);
      if (r.status == jaxamg::Status::kSuccess) {
        for (double v : x) {
          if (!std::isfinite(v)) fail("status SUCCESS with a non-finite solution", config);
        }
      }
      if (r.iterations < 0) fail("negative iteration count", config);
    };
    if (flags & 1) solve(true);
    solve(false);
    if (flags & 16) {
      std::vector<double> scaled(val);
      for (double& v : scaled) v *= 2.0;
      solver.resetup(scaled.data(), nnz);
      solve(false);
      solve(true);
    }
    if (flags & 32) {
      std::vector<double> shifted(val);
      for (double& v : shifted) v = -v;
      solver.replace_values(shifted.data(), nnz);
      solve(false);
    }
  });
  return 0;
}
