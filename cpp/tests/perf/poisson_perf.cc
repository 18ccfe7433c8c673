// Setup and solve profile of one engine config on 3D Poisson (7-point
// stencil (6, -1, ..., -1), Dirichlet, N = n^3, b ~ N(0, 1), x0 = 0), the
// problem of bench/run.py's poisson3d rows. Built with -DJAXAMG_BUILD_PERF=ON.
//
//   jaxamg_poisson_perf CONFIG.json [n ...] [--repeat R] [--levels]
//   jaxamg_poisson_perf CONFIG.json [n ...] [--repeat R] --level0 SCOPE
//   jaxamg_poisson_perf CONFIG.json [n ...] [--repeat R] [--levels] --aniso2d
//
// For every n: the fastest of R setups and solves (wall clock), the AMG setup
// by phase (coarsening with its own phases, Galerkin products, smoothers),
// iterations, time per iteration, operator and grid complexity, the peak
// memory added by the setup (as a multiple of the input CSR, int32 indices
// and float64 values, as bench/run.py reports it) and the true relative
// residual ||b - A x|| / ||b||, computed here with a plain serial loop.
// --levels prints the per-level table of the last setup. --level0 times only
// the classical coarsening of the finest level (AMG scope SCOPE of the
// config) and its Galerkin product, wall clock and CPU time, best of R.
// --aniso2d runs the matrix of bench/problems.py's aniso2d (n^2 unknowns) instead.
// The solver reads the matrix in place (LinearSolver::setup_borrowed), as
// bench/engine_runner.py does; --copy times setup's copy of it instead.
#include <omp.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "amg/amg_solver.h"
#include "amg/classical/classical_coarsening.h"
#include "api/linear_solver.h"
#include "solvers/krylov/krylov_solver.h"

namespace {

using namespace jaxamg;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The AMG preconditioner of a Krylov solver (or the solver itself if it is
// the AMG), through a member pointer formed in a derived class.
struct PrecondOf : KrylovSolver<double> {
  static const Solver<double>* get(const KrylovSolver<double>& k) {
    return (k.*(&PrecondOf::precond_)).get();
  }
};

const AmgSolver<double>* find_amg(const Solver<double>& s) {
  if (auto* amg = dynamic_cast<const AmgSolver<double>*>(&s)) return amg;
  if (auto* k = dynamic_cast<const KrylovSolver<double>*>(&s)) {
    const Solver<double>* p = PrecondOf::get(*k);
    return p ? find_amg(*p) : nullptr;
  }
  return nullptr;
}

// CPU seconds of the process (all threads): steadier than wall clock when
// other processes share the cores.
double cpu_seconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

long proc_kib(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const std::size_t len = std::strlen(key);
  while (std::getline(f, line)) {
    if (line.compare(0, len, key) == 0) return std::atol(line.c_str() + len + 1);
  }
  return -1;
}

// Resets the peak-RSS mark to the current RSS (as bench/run.py does).
void reset_peak() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
}

struct Problem {
  int n;
  std::vector<Index> rp, ci;
  std::vector<double> v, b;
};

Problem poisson3d(int n) {
  Problem p;
  p.n = n;
  const Index N = static_cast<Index>(n) * n * n;
  p.rp.reserve(N + 1);
  p.ci.reserve(7 * static_cast<std::size_t>(N));
  p.v.reserve(7 * static_cast<std::size_t>(N));
  p.rp.push_back(0);
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const Index row = (static_cast<Index>(k) * n + j) * n + i;
        auto put = [&](Index c, double a) {
          p.ci.push_back(c);
          p.v.push_back(a);
        };
        if (k > 0) put(row - n * n, -1);
        if (j > 0) put(row - n, -1);
        if (i > 0) put(row - 1, -1);
        put(row, 6);
        if (i < n - 1) put(row + 1, -1);
        if (j < n - 1) put(row + n, -1);
        if (k < n - 1) put(row + n * n, -1);
        p.rp.push_back(static_cast<Index>(p.ci.size()));
      }
  std::mt19937_64 gen(2024);
  std::normal_distribution<double> normal;
  p.b.resize(N);
  for (double& x : p.b) x = normal(gen);
  return p;
}

// 2D anisotropic Poisson -eps u_xx - u_yy (eps = 1e-3), 5-point on an n^2
// grid, Dirichlet, unknown (i, j) -> i n + j: bench/problems.py's aniso2d
// matrix (the right-hand side is drawn as for poisson3d).
Problem aniso2d(int n) {
  constexpr double eps = 1e-3;
  Problem p;
  p.n = n;
  const Index N = static_cast<Index>(n) * n;
  p.rp.reserve(N + 1);
  p.ci.reserve(5 * static_cast<std::size_t>(N));
  p.v.reserve(5 * static_cast<std::size_t>(N));
  p.rp.push_back(0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const Index row = static_cast<Index>(i) * n + j;
      auto put = [&](Index c, double a) {
        p.ci.push_back(c);
        p.v.push_back(a);
      };
      if (i > 0) put(row - n, -eps);
      if (j > 0) put(row - 1, -1);
      put(row, 2 + 2 * eps);
      if (j < n - 1) put(row + 1, -1);
      if (i < n - 1) put(row + n, -eps);
      p.rp.push_back(static_cast<Index>(p.ci.size()));
    }
  std::mt19937_64 gen(2024);
  std::normal_distribution<double> normal;
  p.b.resize(N);
  for (double& x : p.b) x = normal(gen);
  return p;
}

double true_relres(const Problem& p, const std::vector<double>& x) {
  const Index N = static_cast<Index>(p.b.size());
  double rr = 0, bb = 0;
  for (Index i = 0; i < N; ++i) {
    double r = p.b[i];
    for (Index k = p.rp[i]; k < p.rp[i + 1]; ++k) r -= p.v[k] * x[p.ci[k]];
    rr += r * r;
    bb += p.b[i] * p.b[i];
  }
  return std::sqrt(rr / bb);
}

void level0_bench(const std::string& config, const std::string& scope, int n, int repeat) {
  const Problem p = poisson3d(n);
  const Index N = static_cast<Index>(p.b.size());
  CsrMatrix<double> A = make_csr<double>(N, N, p.rp.data(), p.ci.data(), p.v.data(),
                                         static_cast<Index>(p.v.size()));
  const Config cfg = Config::parse(config);
  classical::ClassicalCoarsening<double> c(classical::classical_params(cfg, scope, 0));
  double best_wall = 1e30, best_cpu = 1e30, gal_wall = 1e30, gal_cpu = 1e30;
  std::map<std::string, double> best_phase;
  Index nc = 0, pnnz = 0, acnnz = 0;
  for (int rep = 0; rep < repeat; ++rep) {
    TransferOperators<double> ops;
    double t = now(), u = cpu_seconds();
    c.build(A, ops);
    best_wall = std::min(best_wall, now() - t);
    best_cpu = std::min(best_cpu, cpu_seconds() - u);
    for (const auto& [name, sec] : c.phase_seconds()) {
      auto it = best_phase.find(name);
      best_phase[name] = it == best_phase.end() ? sec : std::min(it->second, sec);
    }
    CsrMatrix<double> Ac;
    cpu::GalerkinProduct<double> g;
    t = now();
    u = cpu_seconds();
    g.compute(ops.R, A, ops.P, Ac);
    gal_wall = std::min(gal_wall, now() - t);
    gal_cpu = std::min(gal_cpu, cpu_seconds() - u);
    nc = ops.P.ncols;
    pnnz = ops.P.nnz();
    acnnz = Ac.nnz();
  }
  std::printf("%5d coarsen %.3f s (cpu %.3f) [", n, best_wall, best_cpu);
  for (const auto& [name, sec] : best_phase) std::printf(" %s %.3f", name.c_str(), sec);
  std::printf(" ] galerkin %.3f s (cpu %.3f) | nc %d P nnz %d Ac nnz %d\n", gal_wall, gal_cpu,
              static_cast<int>(nc), static_cast<int>(pnnz), static_cast<int>(acnnz));
  std::fflush(stdout);
}

struct Run {
  double setup = 0, solve = 0, setup_cpu = 0, solve_cpu = 0, mem_x = 0, held_x = 0, relres = 0;
  int iters = 0;
  AmgSetupTimings amg;
  std::vector<LevelInfo> levels;
  std::string status;
  std::string grid;  // AmgX-layout grid statistics (with memory per level)
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s CONFIG.json [n ...] [--repeat R] [--levels] [--aniso2d] [--copy]\n",
                 argv[0]);
    return 2;
  }
  std::ifstream cf(argv[1]);
  if (!cf) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  std::stringstream ss;
  ss << cf.rdbuf();
  const std::string config = ss.str();
  std::vector<int> sizes;
  int repeat = 3;
  bool show_levels = false;
  std::string level0_scope;
  bool aniso = false;
  bool copy = false;
  for (int a = 2; a < argc; ++a) {
    if (std::strcmp(argv[a], "--repeat") == 0 && a + 1 < argc) {
      repeat = std::atoi(argv[++a]);
    } else if (std::strcmp(argv[a], "--aniso2d") == 0) {
      aniso = true;
    } else if (std::strcmp(argv[a], "--copy") == 0) {
      copy = true;
    } else if (std::strcmp(argv[a], "--levels") == 0) {
      show_levels = true;
    } else if (std::strcmp(argv[a], "--level0") == 0 && a + 1 < argc) {
      level0_scope = argv[++a];
    } else {
      sizes.push_back(std::atoi(argv[a]));
    }
  }
  if (sizes.empty()) sizes = {32, 48, 64, 100};
  std::printf("config %s, %d threads, best of %d\n", argv[1], omp_get_max_threads(), repeat);
  if (!level0_scope.empty()) {
    for (int n : sizes) level0_bench(config, level0_scope, n, repeat);
    return 0;
  }

  // A small solve first, so one-time initialisation (thread pool) is not timed.
  {
    Problem w = poisson3d(8);
    LinearSolver<double> s(config);
    s.setup(static_cast<Index>(w.b.size()), w.rp.data(), w.ci.data(), w.v.data(),
            static_cast<Index>(w.v.size()));
    std::vector<double> x(w.b.size());
    s.solve(w.b.data(), x.data(), static_cast<Index>(x.size()), false);
  }

  std::printf(
      "%5s %9s %7s %6s | %6s %6s %6s %6s %6s %6s | %6s %6s %5s %8s | %5s %5s %5s | %9s %s\n",
      "n", "N", "setup", "(cpu)", "strng", "selct", "intrp", "trnsp", "galrk", "smth", "solve",
      "(cpu)", "iters", "ms/iter", "opcx", "grdcx", "mem", "relres", "levels");
  for (int n : sizes) {
    const Problem p = aniso ? aniso2d(n) : poisson3d(n);
    const Index N = static_cast<Index>(p.b.size());
    const double csr_bytes = 4.0 * (N + 1) + 12.0 * p.v.size();
    Run best;
    best.setup = best.solve = best.solve_cpu = 1e30;
    std::map<std::string, double> phase_min;
    for (int rep = 0; rep < repeat; ++rep) {
      Run r;
      reset_peak();
      const long rss0 = proc_kib("VmRSS:");
      double t = now(), c = cpu_seconds();
      LinearSolver<double> s(config);
      if (copy) {
        s.setup(N, p.rp.data(), p.ci.data(), p.v.data(), static_cast<Index>(p.v.size()));
      } else {
        s.setup_borrowed(N, p.rp.data(), p.ci.data(), p.v.data(), static_cast<Index>(p.v.size()),
                         nullptr);
      }
      r.setup = now() - t;
      r.setup_cpu = cpu_seconds() - c;
      r.mem_x = (proc_kib("VmHWM:") - rss0) * 1024.0 / csr_bytes;
      r.held_x = (proc_kib("VmRSS:") - rss0) * 1024.0 / csr_bytes;
      std::vector<double> x(N, 0.0);
      t = now();
      c = cpu_seconds();
      const SolveResult res = s.solve(p.b.data(), x.data(), N, false);
      r.solve = now() - t;
      r.solve_cpu = cpu_seconds() - c;
      r.iters = res.iterations;
      r.status = status_name(res.status);
      r.relres = true_relres(p, x);
      if (const AmgSolver<double>* amg = find_amg(s.solver())) {
        r.amg = amg->setup_timings();
        if (show_levels) r.grid = amg->grid_stats();
      }
      r.levels = s.hierarchy();
      // Keep the fastest setup and the fastest solve (their iterations agree),
      // and the fastest time of every phase over the repeats (on a loaded
      // machine each phase is delayed at random).
      {
        std::map<std::string, double> cur;
        for (const auto& l : r.amg.levels)
          for (const auto& [name, sec] : l.phases) cur[name] += sec;
        cur["galerkin"] = r.amg.galerkin;
        cur["smoothers"] = r.amg.smoothers;
        for (const auto& [name, sec] : cur) {
          auto it = phase_min.find(name);
          phase_min[name] = it == phase_min.end() ? sec : std::min(it->second, sec);
        }
      }
      const double solve = std::min(best.solve, r.solve);
      const double solve_cpu = std::min(best.solve_cpu, r.solve_cpu);
      const double mem_x = std::max(best.mem_x, r.mem_x);
      const double relres = std::max(best.relres, r.relres);
      if (r.setup < best.setup) best = r;
      best.solve = solve;
      best.solve_cpu = solve_cpu;
      best.mem_x = mem_x;
      best.relres = relres;
    }
    std::map<std::string, double>& ph = phase_min;
    double nnz = 0, rows = 0;
    for (const LevelInfo& l : best.levels) {
      nnz += l.nnz;
      rows += l.rows;
    }
    const double opcx = best.levels.empty() ? 0 : nnz / best.levels[0].nnz;
    const double grdcx = best.levels.empty() ? 0 : rows / best.levels[0].rows;
    std::printf(
        "%5d %9d %7.3f %6.3f | %6.3f %6.3f %6.3f %6.3f %6.3f %6.3f | %6.3f %6.3f %5d %8.2f | "
        "%5.2f %5.2f %5.2f | %9.2e %zu %s\n",
        n, static_cast<int>(N), best.setup, best.setup_cpu, ph["strength"], ph["selection"],
        ph["interpolation"], ph["transpose"], ph["galerkin"], ph["smoothers"], best.solve,
        best.solve_cpu, best.iters, best.iters ? 1e3 * best.solve / best.iters : 0.0, opcx, grdcx,
        best.mem_x, best.relres, best.levels.size(), best.status.c_str());
    if (show_levels) {
      std::printf("    AMG setup %.3f s of %.3f s (the rest: copying and checking A, Krylov "
                  "workspaces); held after setup %.2f x CSR, peak %.2f x\n",
                  best.amg.total, best.setup, best.held_x, best.mem_x);
      for (std::size_t l = 0; l < best.levels.size(); ++l) {
        std::printf("    level %2zu: rows %9d nnz %10d (%.1f/row)", l,
                    static_cast<int>(best.levels[l].rows), static_cast<int>(best.levels[l].nnz),
                    double(best.levels[l].nnz) / std::max<Index>(1, best.levels[l].rows));
        if (l < best.amg.levels.size()) {
          const auto& lt = best.amg.levels[l];
          std::printf("  coarsen %.4f galerkin %.4f [", lt.coarsening, lt.galerkin);
          for (const auto& [name, sec] : lt.phases) std::printf(" %s %.4f", name.c_str(), sec);
          std::printf(" ]");
        }
        std::printf("\n");
      }
      std::printf("%s", best.grid.c_str());
    }
    std::fflush(stdout);
  }
  return 0;
}
