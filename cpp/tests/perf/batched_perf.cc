// Batched right-hand sides in the engine alone: one solve against k solved
// together (LinearSolver::solve_many) on one setup, 3D Poisson (7-point
// stencil, Dirichlet, N = n^3, b ~ N(0, 1), x0 = 0), the problem of
// bench/batched_rhs.py without the JAX layer. Built with -DJAXAMG_BUILD_PERF=ON.
//
//   jaxamg_batched_perf CONFIG.json [--n 64] [--lanes 8] [--repeat 5] [--only one|many]
//
// Every round times one solve of lane 0 and then the k lanes together (wall
// clock and process CPU); prints the medians, the median of the per-round
// ratios (a busy machine disturbs them less than the times) and the
// iterations of each lane against its one-lane solve. --only runs just one
// of the two for R rounds after the setup (for a profiler).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "api/linear_solver.h"
#include "problems.h"

namespace {

using namespace jaxamg;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double cpu_seconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CONFIG.json [--n 64] [--lanes 8] [--repeat 5]\n", argv[0]);
    return 2;
  }
  int n = 64, lanes = 8, repeat = 5;
  std::string only;
  for (int a = 2; a + 1 < argc; a += 2) {
    const std::string key = argv[a];
    if (key == "--only") {
      only = argv[a + 1];
      continue;
    }
    const int value = std::atoi(argv[a + 1]);
    if (key == "--n") {
      n = value;
    } else if (key == "--lanes") {
      lanes = value;
    } else if (key == "--repeat") {
      repeat = value;
    } else {
      std::fprintf(stderr, "unknown option %s\n", key.c_str());
      return 2;
    }
  }
  std::ifstream f(argv[1]);
  if (!f) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  std::stringstream text;
  text << f.rdbuf();

  const CsrMatrix<double> A = testing::poisson3d<double>(n);
  const Index N = A.nrows;
  std::vector<double> B(static_cast<std::size_t>(N) * lanes);
  std::mt19937_64 gen(2024);
  std::normal_distribution<double> normal;
  for (double& b : B) b = normal(gen);
  std::vector<double> X(B.size()), x1(N);

  LinearSolver<double> s(text.str());
  const double t_setup = now();
  s.setup(N, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  std::printf("3D Poisson %d^3 = %d unknowns, %d lanes, setup %.3f s\n", n, static_cast<int>(N),
              lanes, now() - t_setup);

  std::printf("levels (rows, nnz):");
  for (const LevelInfo& l : s.hierarchy()) {
    std::printf(" (%ld, %ld)", static_cast<long>(l.rows), static_cast<long>(l.nnz));
  }
  std::printf("\n");
  if (!only.empty()) {
    const double t = now(), c = cpu_seconds();
    for (int r = 0; r < repeat; ++r) {
      if (only == "one") {
        s.solve(B.data(), x1.data(), N, false);
      } else {
        s.solve_many(B.data(), X.data(), N, lanes, false);
      }
    }
    std::printf("%d rounds of %s: %.4f s each (cpu %.4f s)\n", repeat, only.c_str(),
                (now() - t) / repeat, (cpu_seconds() - c) / repeat);
    return 0;
  }
  std::vector<int> one_iters(lanes);
  for (int j = 0; j < lanes; ++j) {
    one_iters[j] =
        s.solve(B.data() + static_cast<std::size_t>(j) * N, x1.data(), N, false).iterations;
  }
  std::vector<double> w1, wk, c1, ck, ratio, cratio;
  std::vector<SolveResult> many;
  for (int r = 0; r < repeat; ++r) {
    double t = now(), c = cpu_seconds();
    s.solve(B.data(), x1.data(), N, false);
    w1.push_back(now() - t);
    c1.push_back(cpu_seconds() - c);
    t = now();
    c = cpu_seconds();
    many = s.solve_many(B.data(), X.data(), N, lanes, false);
    wk.push_back(now() - t);
    ck.push_back(cpu_seconds() - c);
    ratio.push_back(wk.back() / w1.back());
    cratio.push_back(ck.back() / c1.back());
  }
  std::printf("one solve %.4f s (cpu %.4f), %d together %.4f s (cpu %.4f)\n", median(w1),
              median(c1), lanes, median(wk), median(ck));
  std::printf("batched / one: wall %.2f, cpu %.2f (median of per-round ratios)\n",
              median(ratio), median(cratio));
  std::printf("iterations (one-lane / batched):");
  for (int j = 0; j < lanes; ++j) std::printf(" %d/%d", one_iters[j], many[j].iterations);
  std::printf("\n");
  return 0;
}
