// Distributed setup and solve on 3D Poisson (7-point stencil, Dirichlet,
// N = n^3, z-slab row blocks, b = 1, x0 = 0). Built with
// -DJAXAMG_BUILD_PERF=ON and MPI; run e.g.
//
//   OMP_NUM_THREADS=1 mpirun -np 2 jaxamg_mpi_poisson_perf 64 [CONFIG.json] [--repeat R]
//
// Prints, on rank 0, the slowest process's setup and solve time (best of R),
// iterations, final residual, halo bytes sent per solve by rank 0, and with
// one process also the serial engine (LinearSolver) on the same problem.
#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/linear_solver.h"
#include "dist/dist_linear_solver.h"

namespace {

using namespace jaxamg;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU seconds of this process (user + system), to separate the work per
// process from waiting when the machine is shared.
double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

const char* kDefaultConfig = R"({"config_version": 2, "solver": {"solver": "PCG", "scope": "main",
  "max_iters": 500, "tolerance": 1e-8, "convergence": "RELATIVE_INI_CORE", "monitor_residual": 1,
  "preconditioner": {"solver": "AMG", "scope": "amg", "algorithm": "AGGREGATION",
    "selector": "SIZE_8", "max_iters": 1, "cycle": "V", "presweeps": 1, "postsweeps": 1,
    "max_levels": 50, "coarse_solver": "DENSE_LU_SOLVER",
    "smoother": {"solver": "CHEBYSHEV", "scope": "cheb", "chebyshev_polynomial_order": 2,
      "preconditioner": {"solver": "JACOBI_L1", "scope": "cj"}}}}})";

// Rows [lo, hi) of the 3D Poisson matrix with global columns.
void poisson_rows(int n, int64_t lo, int64_t hi, std::vector<int32_t>& rp, std::vector<int32_t>& col,
                  std::vector<double>& val) {
  rp.assign(1, 0);
  col.clear();
  val.clear();
  for (int64_t row = lo; row < hi; ++row) {
    const int i = row % n, j = (row / n) % n, k = static_cast<int>(row / (int64_t(n) * n));
    auto add = [&](int64_t c, double v) { col.push_back(static_cast<int32_t>(c)); val.push_back(v); };
    if (k > 0) add(row - int64_t(n) * n, -1);
    if (j > 0) add(row - n, -1);
    if (i > 0) add(row - 1, -1);
    add(row, 6);
    if (i < n - 1) add(row + 1, -1);
    if (j < n - 1) add(row + n, -1);
    if (k < n - 1) add(row + int64_t(n) * n, -1);
    rp.push_back(static_cast<int32_t>(col.size()));
  }
}

}  // namespace

// Times setup and solve of the distributed engine (and, on one process,
// the serial engine) and prints one line each on rank 0.
void measure(int n, int repeat, const std::string& config, int rank, int size) {
  const int64_t N = int64_t(n) * n * n;
  const int64_t lo = N * rank / size, hi = N * (rank + 1) / size;
  std::vector<int32_t> rp, col;
  std::vector<double> val;
  poisson_rows(n, lo, hi, rp, col, val);
  std::vector<double> b(hi - lo, 1.0), x(hi - lo);
  double best_setup = 1e30, best_solve = 1e30, best_cpu = 1e30;
  SolveResult r;
  uint64_t bytes = 0;
  std::vector<LevelInfo> levels;
  for (int rep = 0; rep < repeat; ++rep) {
    dist::DistLinearSolver<double> s(config, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = now();
    s.setup(lo, N, static_cast<Index>(hi - lo), rp.data(), col.data(), val.data(),
            static_cast<int64_t>(col.size()));
    double setup = now() - t;
    MPI_Allreduce(MPI_IN_PLACE, &setup, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const uint64_t before = s.halo_bytes_sent();
    MPI_Barrier(MPI_COMM_WORLD);
    t = now();
    const double c = cpu_now();
    r = s.solve(b.data(), x.data(), static_cast<Index>(hi - lo), false);
    double solve = now() - t;
    double cpu = cpu_now() - c;
    MPI_Allreduce(MPI_IN_PLACE, &solve, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &cpu, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    best_cpu = std::min(best_cpu, cpu);
    bytes = s.halo_bytes_sent() - before;
    levels = s.hierarchy();
    best_setup = std::min(best_setup, setup);
    best_solve = std::min(best_solve, solve);
  }
  if (rank == 0) {
    std::printf("poisson3d n=%d N=%lld processes=%d: setup %.3f s, solve %.3f s (CPU %.3f s on the "
                "busiest process), %d iterations (%s, residual %.3e), levels %zu, fine-level halo "
                "bytes sent by rank 0 per solve %llu\n",
                n, static_cast<long long>(N), size, best_setup, best_solve, best_cpu, r.iterations,
                status_name(r.status), r.residual, levels.size(),
                static_cast<unsigned long long>(bytes));
  }
  if (size == 1) {
    double best_s = 1e30, best_v = 1e30;
    SolveResult rs;
    for (int rep = 0; rep < repeat; ++rep) {
      LinearSolver<double> s(config);
      double t = now();
      s.setup(static_cast<Index>(N), rp.data(), col.data(), val.data(), static_cast<Index>(col.size()));
      best_s = std::min(best_s, now() - t);
      t = now();
      rs = s.solve(b.data(), x.data(), static_cast<Index>(N), false);
      best_v = std::min(best_v, now() - t);
    }
    std::printf("serial engine (LinearSolver), same problem: setup %.3f s, solve %.3f s, %d iterations\n",
                best_s, best_v, rs.iterations);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = 64, repeat = 3;
  std::string config = kDefaultConfig;
  for (int a = 1; a < argc; ++a) {
    if (std::strcmp(argv[a], "--repeat") == 0 && a + 1 < argc) {
      repeat = std::atoi(argv[++a]);
    } else if (std::isdigit(static_cast<unsigned char>(argv[a][0]))) {
      n = std::atoi(argv[a]);
    } else {
      std::ifstream f(argv[a]);
      if (!f) {
        if (rank == 0) std::fprintf(stderr, "cannot read the config file %s\n", argv[a]);
        MPI_Finalize();
        return 2;
      }
      std::stringstream ss;
      ss << f.rdbuf();
      config = ss.str();
    }
  }
  // Every error is agreed across processes (each one throws the same
  // message), so each reports it and exits instead of aborting the job.
  try {
    measure(n, repeat, config, rank, size);
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "error: %s\n", e.what());
    MPI_Finalize();
    return 1;
  }
  MPI_Finalize();
  return 0;
}
