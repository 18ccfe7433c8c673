/*
 * hypre BoomerAMG + PCG/GMRES benchmark driver.
 *
 * Reads a matrix and right-hand side in the bench binary format written by
 * bench/problems.py (see write_bin there):
 *
 *   char[8]  magic "JXAMGCSR"
 *   int64    n, nnz
 *   int64    indptr[n + 1]
 *   int32    indices[nnz]
 *   float64  data[nnz]
 *   float64  b[n]
 *
 * builds a ParCSR matrix (rows split in contiguous blocks over the MPI ranks),
 * runs Krylov + BoomerAMG from x0 = 0, writes x (float64[n]) to the output
 * file and prints one line "RESULT {json}" on rank 0.  The true residual is
 * computed by the caller, not here.
 *
 * Build: bench/peers/hypre_runner.py compiles this with mpicc at run time.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "HYPRE.h"
#include "HYPRE_krylov.h"
#include "HYPRE_parcsr_ls.h"
#include "_hypre_parcsr_ls.h"

static void die(const char *msg) {
  fprintf(stderr, "hypre_driver: %s\n", msg);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

/* VmRSS / VmHWM in KiB from /proc/self/status (-1 when unavailable). */
static long status_kib(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  size_t k = strlen(key);
  if (!f) return -1;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, key, k) == 0 && line[k] == ':') {
      v = atol(line + k + 1);
      break;
    }
  }
  fclose(f);
  return v;
}

/* Reset VmHWM to the current RSS; returns 1 on success. */
static int reset_hwm(void) {
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (!f) return 0;
  int ok = fputs("5", f) >= 0;
  if (fclose(f) != 0) ok = 0;
  return ok;
}

static void xread(void *p, size_t sz, size_t cnt, FILE *f) {
  if (fread(p, sz, cnt, f) != cnt) die("short read on matrix file");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  const char *in = NULL, *out = NULL;
  const char *krylov = "pcg";
  int coarsen = 10, interp = 6, pmax = 4, relax_down = 13, relax_up = 14, relax_coarse = 9;
  int maxit = 500, kdim = 30, agg_levels = 0, max_coarse = 9;
  int num_functions = 1, nodal = 0;
  double theta = 0.25, tol = 1e-8, max_row_sum = 0.9;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
#define OPT(name) (strcmp(a, name) == 0 && v && (++i, 1))
    if (OPT("-in")) in = v;
    else if (OPT("-out")) out = v;
    else if (OPT("-krylov")) krylov = v;
    else if (OPT("-coarsen")) coarsen = atoi(v);
    else if (OPT("-interp")) interp = atoi(v);
    else if (OPT("-pmax")) pmax = atoi(v);
    else if (OPT("-theta")) theta = atof(v);
    else if (OPT("-max_row_sum")) max_row_sum = atof(v);
    else if (OPT("-relax_down")) relax_down = atoi(v);
    else if (OPT("-relax_up")) relax_up = atoi(v);
    else if (OPT("-relax_coarse")) relax_coarse = atoi(v);
    else if (OPT("-agg_levels")) agg_levels = atoi(v);
    else if (OPT("-max_coarse")) max_coarse = atoi(v);
    else if (OPT("-tol")) tol = atof(v);
    else if (OPT("-maxit")) maxit = atoi(v);
    else if (OPT("-kdim")) kdim = atoi(v);
    else if (OPT("-num_functions")) num_functions = atoi(v);
    else if (OPT("-nodal")) nodal = atoi(v);
    else {
      if (rank == 0) fprintf(stderr, "hypre_driver: unknown or incomplete option %s\n", a);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
#undef OPT
  }
  if (!in || !out) die("usage: hypre_driver -in FILE -out FILE [options]");
  int use_gmres = strcmp(krylov, "gmres") == 0;
  if (!use_gmres && strcmp(krylov, "pcg") != 0) die("-krylov must be pcg or gmres");

  /* ---- read this rank's block of rows ---------------------------------- */
  FILE *f = fopen(in, "rb");
  if (!f) die("cannot open matrix file");
  char magic[8];
  int64_t n64, nnz64;
  xread(magic, 1, 8, f);
  if (memcmp(magic, "JXAMGCSR", 8) != 0) die("bad magic in matrix file");
  xread(&n64, 8, 1, f);
  xread(&nnz64, 8, 1, f);
  if (n64 > 2147483647LL) die("matrix too large for 32-bit hypre indices");
  HYPRE_Int n = (HYPRE_Int)n64;
  if (num_functions < 1 || n64 % num_functions != 0) die("-num_functions must divide the rows");
  /* Systems AMG: each rank holds whole nodes (num_functions rows each), so
     that hypre's default unknown-to-function map (row index modulo
     num_functions) holds on every rank. */
  const int64_t nodes = n64 / num_functions;
  HYPRE_Int ilower = (HYPRE_Int)((nodes * rank) / size * num_functions);
  HYPRE_Int iupper = (HYPRE_Int)((nodes * (rank + 1)) / size * num_functions) - 1;
  HYPRE_Int nloc = iupper - ilower + 1;

  const long off_indptr = 8 + 16;
  const long off_indices = off_indptr + 8L * (n64 + 1);
  const long off_data = off_indices + 4L * nnz64;
  const long off_b = off_data + 8L * nnz64;

  int64_t *ptr = malloc(sizeof(int64_t) * (nloc + 1));
  fseek(f, off_indptr + 8L * ilower, SEEK_SET);
  xread(ptr, 8, (size_t)nloc + 1, f);
  int64_t lnnz = ptr[nloc] - ptr[0];
  int32_t *cols32 = malloc(sizeof(int32_t) * (lnnz > 0 ? lnnz : 1));
  double *vals = malloc(sizeof(double) * (lnnz > 0 ? lnnz : 1));
  double *bloc = malloc(sizeof(double) * (nloc > 0 ? nloc : 1));
  fseek(f, off_indices + 4L * ptr[0], SEEK_SET);
  xread(cols32, 4, (size_t)lnnz, f);
  fseek(f, off_data + 8L * ptr[0], SEEK_SET);
  xread(vals, 8, (size_t)lnnz, f);
  fseek(f, off_b + 8L * ilower, SEEK_SET);
  xread(bloc, 8, (size_t)nloc, f);
  fclose(f);

  HYPRE_Init();

  double t_load0 = MPI_Wtime();
  HYPRE_Int *ncols = malloc(sizeof(HYPRE_Int) * nloc);
  HYPRE_BigInt *rows = malloc(sizeof(HYPRE_BigInt) * nloc);
  HYPRE_BigInt *cols = malloc(sizeof(HYPRE_BigInt) * (lnnz > 0 ? lnnz : 1));
  for (HYPRE_Int i = 0; i < nloc; ++i) {
    rows[i] = ilower + i;
    ncols[i] = (HYPRE_Int)(ptr[i + 1] - ptr[i]);
  }
  for (int64_t k = 0; k < lnnz; ++k) cols[k] = cols32[k];
  free(cols32);

  HYPRE_IJMatrix ij;
  HYPRE_IJMatrixCreate(MPI_COMM_WORLD, ilower, iupper, ilower, iupper, &ij);
  HYPRE_IJMatrixSetObjectType(ij, HYPRE_PARCSR);
  HYPRE_IJMatrixSetRowSizes(ij, ncols);
  HYPRE_IJMatrixInitialize(ij);
  HYPRE_IJMatrixSetValues(ij, nloc, ncols, rows, cols, vals);
  HYPRE_IJMatrixAssemble(ij);
  HYPRE_ParCSRMatrix A;
  HYPRE_IJMatrixGetObject(ij, (void **)&A);
  free(cols);
  free(vals);
  free(ncols);
  free(ptr);

  HYPRE_IJVector ijb, ijx;
  HYPRE_IJVectorCreate(MPI_COMM_WORLD, ilower, iupper, &ijb);
  HYPRE_IJVectorSetObjectType(ijb, HYPRE_PARCSR);
  HYPRE_IJVectorInitialize(ijb);
  HYPRE_IJVectorSetValues(ijb, nloc, rows, bloc);
  HYPRE_IJVectorAssemble(ijb);
  double *zeros = calloc(nloc > 0 ? nloc : 1, sizeof(double));
  HYPRE_IJVectorCreate(MPI_COMM_WORLD, ilower, iupper, &ijx);
  HYPRE_IJVectorSetObjectType(ijx, HYPRE_PARCSR);
  HYPRE_IJVectorInitialize(ijx);
  HYPRE_IJVectorSetValues(ijx, nloc, rows, zeros);
  HYPRE_IJVectorAssemble(ijx);
  HYPRE_ParVector pb, px;
  HYPRE_IJVectorGetObject(ijb, (void **)&pb);
  HYPRE_IJVectorGetObject(ijx, (void **)&px);
  free(bloc);
  double t_load = MPI_Wtime() - t_load0;

  /* ---- preconditioner and Krylov method -------------------------------- */
  HYPRE_Solver amg, solver;
  HYPRE_BoomerAMGCreate(&amg);
  HYPRE_BoomerAMGSetPrintLevel(amg, 0);
  HYPRE_BoomerAMGSetCoarsenType(amg, coarsen);
  HYPRE_BoomerAMGSetInterpType(amg, interp);
  HYPRE_BoomerAMGSetPMaxElmts(amg, pmax);
  HYPRE_BoomerAMGSetStrongThreshold(amg, theta);
  HYPRE_BoomerAMGSetMaxRowSum(amg, max_row_sum);
  HYPRE_BoomerAMGSetAggNumLevels(amg, agg_levels);
  HYPRE_BoomerAMGSetMaxCoarseSize(amg, max_coarse);
  /* num_functions > 1: the unknown approach (strength and interpolation
     within each function); nodal > 0 coarsens by nodes on block norms. */
  HYPRE_BoomerAMGSetNumFunctions(amg, num_functions);
  if (nodal > 0) HYPRE_BoomerAMGSetNodal(amg, nodal);
  HYPRE_BoomerAMGSetCycleRelaxType(amg, relax_down, 1);
  HYPRE_BoomerAMGSetCycleRelaxType(amg, relax_up, 2);
  HYPRE_BoomerAMGSetCycleRelaxType(amg, relax_coarse, 3);
  HYPRE_BoomerAMGSetNumSweeps(amg, 1);
  HYPRE_BoomerAMGSetCycleNumSweeps(amg, 1, 3);
  HYPRE_BoomerAMGSetTol(amg, 0.0);
  HYPRE_BoomerAMGSetMaxIter(amg, 1);

  if (use_gmres) {
    HYPRE_ParCSRGMRESCreate(MPI_COMM_WORLD, &solver);
    HYPRE_GMRESSetKDim(solver, kdim);
    HYPRE_GMRESSetMaxIter(solver, maxit);
    HYPRE_GMRESSetTol(solver, tol);
    HYPRE_GMRESSetAbsoluteTol(solver, 0.0);
    HYPRE_GMRESSetPrintLevel(solver, 0);
    HYPRE_GMRESSetPrecond(solver, (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSolve,
                          (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSetup, amg);
  } else {
    HYPRE_ParCSRPCGCreate(MPI_COMM_WORLD, &solver);
    HYPRE_PCGSetMaxIter(solver, maxit);
    HYPRE_PCGSetTol(solver, tol);
    HYPRE_PCGSetAbsoluteTol(solver, 0.0);
    HYPRE_PCGSetTwoNorm(solver, 1); /* ||r||_2 / ||b||_2, as the other solvers */
    HYPRE_PCGSetPrintLevel(solver, 0);
    HYPRE_PCGSetPrecond(solver, (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSolve,
                        (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSetup, amg);
  }

  /* ---- timed setup and solve, with peak-RSS tracking ------------------ */
  MPI_Barrier(MPI_COMM_WORLD);
  int hwm_reset = reset_hwm();
  long rss_base = status_kib("VmRSS");
  long hwm_base = status_kib("VmHWM");
  double t0 = MPI_Wtime();
  if (use_gmres) HYPRE_ParCSRGMRESSetup(solver, A, pb, px);
  else HYPRE_ParCSRPCGSetup(solver, A, pb, px);
  MPI_Barrier(MPI_COMM_WORLD);
  double t1 = MPI_Wtime();
  long hwm_setup = status_kib("VmHWM");
  if (hwm_reset) hwm_reset = reset_hwm();
  long rss_solve_base = status_kib("VmRSS");
  double t2 = MPI_Wtime();
  HYPRE_Int iters = 0, status = 0;
  double relres = -1.0;
  if (use_gmres) {
    status = HYPRE_ParCSRGMRESSolve(solver, A, pb, px);
    HYPRE_GMRESGetNumIterations(solver, &iters);
    HYPRE_GMRESGetFinalRelativeResidualNorm(solver, &relres);
  } else {
    status = HYPRE_ParCSRPCGSolve(solver, A, pb, px);
    HYPRE_PCGGetNumIterations(solver, &iters);
    HYPRE_PCGGetFinalRelativeResidualNorm(solver, &relres);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double t3 = MPI_Wtime();
  long hwm_solve = status_kib("VmHWM");

  /* Peak increase per rank, summed over ranks (KiB). */
  long inc[2] = {hwm_setup - (hwm_reset ? rss_base : hwm_base),
                 hwm_solve - (hwm_reset ? rss_solve_base : hwm_setup)};
  long inc_sum[2];
  MPI_Reduce(inc, inc_sum, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);

  /* ---- hierarchy statistics (after timing) ----------------------------- */
  hypre_ParAMGData *amg_data = (hypre_ParAMGData *)amg;
  int nlev = hypre_ParAMGDataNumLevels(amg_data);
  hypre_ParCSRMatrix **Aarr = hypre_ParAMGDataAArray(amg_data);
  char levels[8192];
  size_t pos = 0;
  levels[0] = 0;
  for (int l = 0; l < nlev; ++l) {
    hypre_ParCSRMatrix *Al = Aarr[l];
    long loc = (long)hypre_CSRMatrixNumNonzeros(hypre_ParCSRMatrixDiag(Al)) +
               (long)hypre_CSRMatrixNumNonzeros(hypre_ParCSRMatrixOffd(Al));
    long glob = 0;
    MPI_Allreduce(&loc, &glob, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    long grows = (long)hypre_ParCSRMatrixGlobalNumRows(Al);
    if (pos < sizeof levels - 64)
      pos += (size_t)snprintf(levels + pos, sizeof levels - pos, "%s[%ld, %ld]",
                              l ? ", " : "", grows, glob);
  }

  /* ---- write x ---------------------------------------------------------- */
  double *xloc = malloc(sizeof(double) * (nloc > 0 ? nloc : 1));
  HYPRE_IJVectorGetValues(ijx, nloc, rows, xloc);
  if (rank == 0) {
    FILE *fo = fopen(out, "wb");
    if (!fo) die("cannot create output file");
    fclose(fo);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int r = 0; r < size; ++r) {
    if (r == rank) {
      FILE *fo = fopen(out, "r+b");
      if (!fo) die("cannot open output file");
      fseek(fo, 8L * ilower, SEEK_SET);
      if (fwrite(xloc, 8, (size_t)nloc, fo) != (size_t)nloc) die("short write");
      fclose(fo);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }

  if (rank == 0) {
    printf("RESULT {\"n\": %d, \"ranks\": %d, \"krylov\": \"%s\", \"load_seconds\": %.6f, "
           "\"setup_seconds\": %.6f, \"solve_seconds\": %.6f, \"iterations\": %d, "
           "\"reported_relres\": %.6e, \"hypre_status\": %d, \"levels\": [%s], "
           "\"setup_peak_increase_kib\": %ld, \"solve_peak_increase_kib\": %ld, "
           "\"hwm_reset\": %s, \"version\": \"%s\"}\n",
           (int)n, size, krylov, t_load, t1 - t0, t3 - t2, (int)iters, relres, (int)status,
           levels, inc_sum[0], inc_sum[1], hwm_reset ? "true" : "false",
           HYPRE_RELEASE_VERSION);
    fflush(stdout);
  }

  free(xloc);
  free(zeros);
  free(rows);
  if (use_gmres) HYPRE_ParCSRGMRESDestroy(solver);
  else HYPRE_ParCSRPCGDestroy(solver);
  HYPRE_BoomerAMGDestroy(amg);
  HYPRE_IJVectorDestroy(ijb);
  HYPRE_IJVectorDestroy(ijx);
  HYPRE_IJMatrixDestroy(ij);
  HYPRE_Finalize();
  MPI_Finalize();
  return 0;
}
