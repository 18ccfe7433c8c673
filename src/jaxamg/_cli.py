"""The command-line interface: ``python -m jaxamg solve A.mtx ...``.

Solves one Matrix Market system with the native engine. It never imports JAX,
so it starts fast and works where JAX is not installed.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from ._core import mtx
from ._core.errors import ConfigError
from ._core.native import engine
from ._version import __version__
from .config import default_config, prepare_config, shipped_configs
from .config import load as load_shipped

PROG = "jaxamg"

# Exit codes (documented in the `solve` help).
EXIT_OK = 0
EXIT_BAD_INPUT = 1
EXIT_USAGE = 2
EXIT_NOT_SUCCESS = 3

# Keys that name a solver; an object under one of them opens a nested scope.
_SOLVER_KEYS = (
    "solver",
    "preconditioner",
    "smoother",
    "coarse_solver",
    "cpr_first_stage_preconditioner",
    "cpr_second_stage_preconditioner",
)

_SOLVE_DESCRIPTION = """\
Solve A x = b for a sparse square matrix A read from a Matrix Market file.

Without --rhs the right-hand side is b = A * ones, so the exact solution is a
vector of ones and the error of the result is easy to judge."""

_SOLVE_EPILOG = """\
configuration:
  --config FILE or --config-string TEXT, in AmgX JSON (config_version 2 with
  nested scopes, or flat) or AmgX's legacy "name=value, scope:name=value" text.
  --config also takes a shipped config's name (jaxamg.config.shipped_configs(),
  e.g. FGMRES_AGGREGATION) where no file of that name exists.
  Without either, jaxamg's default is used (jaxamg.config.DEFAULT_CONFIG:
  PBICGSTAB preconditioned by one V-cycle of classical AMG). A JSON config is
  merged over that default as jaxamg.solve merges it (JAX-AMG's rules), so one
  config gives the same solver and hierarchy in both; --as-given runs it as
  AmgX would, unset keys taking AmgX's defaults.

statistics (the rule for JSON configs; a key the config sets is left alone):
  - the top solver's scope (the "solver" object, or the top level of a flat
    config) gets monitor_residual, store_res_history, obtain_timings and
    print_grid_stats = 1, and print_solve_stats = 1 unless the config turns
    monitor_residual off;
  - every nested scope whose solver is AMG gets print_grid_stats = 1.
  With --as-given, as in AmgX, the solvers of a flat config share the
  "default" scope, which prints no tables. A legacy text config is always
  passed unchanged (AmgX's defaults): set the print flags in it yourself.

output:
  The engine's statistics, then a summary line, on stdout. With --json the
  summary is instead one JSON line, always the last line, with the keys
  iterations, residual (the solver's final monitored norm, null if it does not
  monitor), status (SUCCESS, FAILED, DIVERGED or NOT_CONVERGED), setup_s,
  solve_s, levels (0 without AMG), operator_complexity and grid_complexity
  (null without AMG), true_relative_residual (||b - A x|| / ||b|| in float64
  with the matrix as read; ||b - A x|| when b = 0).

exit status:
  0 the solve reached SUCCESS; 3 it ended with another status (the solution
  is still written); 1 bad input (missing or malformed file, non-square
  matrix, non-finite values, invalid config); 2 bad command-line usage."""


class _Parser(argparse.ArgumentParser):
    # One line on stderr, like every other error of this command.
    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message}; see '{self.prog} --help'\n")
        sys.exit(EXIT_USAGE)


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG, description="jaxamg: sparse linear solves with AMG and Krylov methods."
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    solve = commands.add_parser(
        "solve",
        help="solve A x = b from Matrix Market files",
        description=_SOLVE_DESCRIPTION,
        epilog=_SOLVE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    solve.add_argument(
        "matrix", metavar="A.mtx", help="the square matrix A (coordinate or array format)"
    )
    solve.add_argument(
        "--rhs", metavar="b.mtx", help="right-hand side b, n x 1 (default: A * ones)"
    )
    cfg = solve.add_mutually_exclusive_group()
    cfg.add_argument("--config", metavar="cfg.json", help="solver configuration file")
    cfg.add_argument("--config-string", metavar="TEXT", help="solver configuration text")
    solve.add_argument(
        "--solution", metavar="x.mtx", help="write x here (Matrix Market array format)"
    )
    solve.add_argument("--x0", metavar="x0.mtx", help="initial guess (default: zeros)")
    solve.add_argument("--transpose", action="store_true", help="solve A^T x = b instead")
    solve.add_argument(
        "--dtype",
        choices=("float64", "float32"),
        default="float64",
        help="precision of the solve (default: float64)",
    )
    solve.add_argument(
        "--as-given",
        action="store_true",
        help="run a JSON config as given, without jaxamg.solve's defaults (AmgX's behaviour)",
    )
    solve.add_argument("--json", action="store_true", help="end with one JSON line of results")
    return parser


def _is_json(text: str) -> bool:
    return text.lstrip().startswith("{")


def _load_config(args: argparse.Namespace) -> tuple[str, dict[str, Any] | None]:
    """The config text and, for JSON, its parsed form (None for legacy text)."""
    if args.config is not None and not os.path.exists(args.config):
        try:
            cfg = load_shipped(args.config)
        except ConfigError:
            raise ValueError(
                f"config file '{args.config}' does not exist and is no shipped config "
                f"({', '.join(shipped_configs())}); pass the path of an AmgX JSON config "
                "or a shipped config's name"
            ) from None
        return json.dumps(cfg), cfg
    if args.config is not None:
        try:
            with open(args.config, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise ValueError(
                f"config file '{args.config}' cannot be read ({e.strerror or e}); "
                "pass the path of an AmgX JSON config"
            ) from None
        source = f"config file '{args.config}'"
    elif args.config_string is not None:
        text, source = args.config_string, "--config-string"
    else:
        cfg = default_config()
        return json.dumps(cfg), cfg
    if not _is_json(text):
        return text, None
    try:
        cfg = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(
            f"{source} is not valid JSON ({e.msg} at line {e.lineno}, column {e.colno}); "
            "fix the JSON or pass legacy 'name=value, ...' text"
        ) from None
    return text, cfg


def _with_statistics(cfg: dict[str, Any]) -> dict[str, Any]:
    """A copy of cfg with the statistics flags of the documented rule added."""
    cfg = copy.deepcopy(cfg)
    top = cfg["solver"] if isinstance(cfg.get("solver"), dict) else cfg
    for flag in ("monitor_residual", "store_res_history", "obtain_timings", "print_grid_stats"):
        top.setdefault(flag, 1)
    # The engine refuses to print an iteration table it has no residuals for.
    if top.get("monitor_residual") != 0:
        top.setdefault("print_solve_stats", 1)

    def visit(scope: dict[str, Any]) -> None:
        for key in _SOLVER_KEYS:
            child = scope.get(key)
            if isinstance(child, dict):
                if child.get("solver") == "AMG":
                    child.setdefault("print_grid_stats", 1)
                visit(child)

    visit(top)
    return cfg


def _complexities(levels: list[tuple[int, int]]) -> tuple[float | None, float | None]:
    if not levels:
        return None, None
    rows0, nnz0 = levels[0]
    op = sum(nnz for _, nnz in levels) / nnz0 if nnz0 else None
    grid = sum(rows for rows, _ in levels) / rows0 if rows0 else None
    return op, grid


def _solve(args: argparse.Namespace) -> int:
    import numpy as np

    text, cfg = _load_config(args)
    if cfg is not None:
        if not args.as_given:
            cfg = json.loads(prepare_config(cfg))
        text = json.dumps(_with_statistics(cfg))
    # Parsing the config first reports a bad one before a large matrix is read.
    solver = engine().EngineSolver(text, args.dtype)

    A = mtx.read_matrix(args.matrix, "matrix")
    n = A.shape[0]
    b = mtx.read_vector(args.rhs, n, "rhs") if args.rhs else A @ np.ones(n)
    x0 = mtx.read_vector(args.x0, n, "x0") if args.x0 else None

    dtype = np.dtype(args.dtype)
    if dtype == np.float32:
        limit = float(np.finfo(np.float32).max)
        for name, values in (("matrix", A.data), ("rhs", b), ("x0", x0)):
            big = 0.0 if values is None or values.size == 0 else float(np.max(np.abs(values)))
            if big > limit:
                raise ValueError(
                    f"{name}: the value {big:.3e} overflows float32 (largest {limit:.3e}); "
                    "use --dtype float64"
                )
    data = A.data.astype(dtype, copy=False)

    # NotImplementedError (a solver the engine does not provide) is a
    # RuntimeError and is reported by main like the other engine errors.
    # copy=False: the engine reads these arrays in place (A is not modified
    # while it lives), so the matrix is held once, not twice.
    solver.setup(
        A.indptr.astype(np.int32, copy=False),
        A.indices.astype(np.int32, copy=False),
        data,
        copy=False,
    )
    x, info = solver.solve(
        b.astype(dtype),
        None if x0 is None else x0.astype(dtype),
        transpose=args.transpose,
    )
    log = solver.take_log()
    levels = [tuple(level) for level in solver.hierarchy()]

    if args.solution:
        mtx.write_vector(args.solution, x, comment=f" solution computed by {PROG} {__version__}")

    op = A.T if args.transpose else A
    r = b - op @ x.astype(np.float64)
    bnorm = float(np.linalg.norm(b))
    true_rel = float(np.linalg.norm(r)) / bnorm if bnorm > 0 else float(np.linalg.norm(r))
    op_cx, grid_cx = _complexities(levels)

    if log:
        sys.stdout.write(log if log.endswith("\n") else log + "\n")
    status = info["status_name"]
    if args.json:
        result = {
            "iterations": info["iterations"],
            "residual": info["residual"],
            "status": status,
            "setup_s": info["setup_seconds"],
            "solve_s": info["solve_seconds"],
            "levels": len(levels),
            "operator_complexity": op_cx,
            "grid_complexity": grid_cx,
            "true_relative_residual": true_rel,
        }
        sys.stdout.write(json.dumps(result) + "\n")
    else:
        residual = "not monitored" if info["residual"] is None else f"{info['residual']:.6e}"
        sys.stdout.write(
            f"{PROG}: {status} after {info['iterations']} iterations, residual {residual}, "
            f"true relative residual {true_rel:.3e}, setup {info['setup_seconds']:.3g} s, "
            f"solve {info['solve_seconds']:.3g} s"
            + (f", solution written to {args.solution}" if args.solution else "")
            + "\n"
        )
    return EXIT_OK if status == "SUCCESS" else EXIT_NOT_SUCCESS


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status."""
    args = _build_parser().parse_args(argv)
    try:
        return _solve(args)
    except ConfigError as e:
        reason = f"config: {e}"
    except (ValueError, RuntimeError, ImportError, MemoryError) as e:
        reason = str(e) or type(e).__name__
    except KeyboardInterrupt:
        return 130
    # Engine messages are one line already; join any that are not.
    sys.stderr.write(f"{PROG} {args.command}: error: {' '.join(reason.split())}\n")
    return EXIT_BAD_INPUT
