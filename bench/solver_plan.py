"""Which solver runs bench/run.py makes on a problem: the engine configs
(shipped configs of src/jaxamg/configs, plus "auto" and the default config as
`jaxamg.solve` picks them) with the problem families each applies to, and
the peers (PyAMG, hypre, SciPy) with their labels."""

from __future__ import annotations

import os

HERE = os.path.dirname(os.path.abspath(__file__))
SHIPPED_CONFIGS = os.path.join(os.path.dirname(HERE), "src", "jaxamg", "configs")

# Engine configs: shipped config (src/jaxamg/configs, file name in any case)
# -> (label, class, families it runs on).
# class drives the targets in bench/report.py.
ELASTICITY = ("elast3d-nu030", "elast3d-nu045", "elast3d-nu049")
FEM_FAMILIES = (*ELASTICITY, "jumpfem3d", "anisofem2d", "supg2d", "neumann3d")
# Not files: the configs jaxamg.solve runs with config="auto" and with no
# config (engine_runner.py asks jaxamg.config for them, per problem).
SPECIAL_CONFIGS = ("auto", "default")
ENGINE_CONFIGS = {
    "auto": ('jaxamg config="auto"', "auto", FEM_FAMILIES),
    "default": (
        "jaxamg default config (PBICGSTAB + AMG, the run's tolerance)",
        "default",
        FEM_FAMILIES,
    ),
    "pcg_classical_l1jacobi_t025.json": (
        "jaxamg PCG + classical (PMIS, D2, Pmax 4, θ 0.25, l1-Jacobi)",
        "classical",
        ("poisson3d", "aniso2d", "jump3d"),
    ),
    "pcg_classical_l1jacobi_t05.json": (
        "jaxamg PCG + classical (PMIS, D2, Pmax 4, θ 0.5, l1-Jacobi)",
        "classical",
        ("poisson3d", "jump3d"),
    ),
    "pcg_classical_mcgs_t025.json": (
        "jaxamg PCG + classical (PMIS, D2, Pmax 4, θ 0.25, sym. multicolor GS)",
        "classical",
        ("poisson3d", "aniso2d", "jump3d", "jumpfem3d", "anisofem2d", "neumann3d"),
    ),
    "pcg_classical_agg1_cheby2.json": (
        "jaxamg PCG + classical (PMIS, 1 aggressive level two-stage ext+i, D2, Pmax 4, θ 0.25, "
        "Chebyshev(2) on l1-Jacobi)",
        "classical",
        ("poisson3d", "aniso2d", "jump3d", "jumpfem3d", "anisofem2d"),
    ),
    "pcgf_aggregation_size8_cg.json": (
        "jaxamg PCGF + aggregation (SIZE_8, CG cycle, sym. multicolor GS)",
        "aggregation",
        ("poisson3d", "aniso2d", "jump3d"),
    ),
    "fgmres_classical_mcgs.json": (
        "jaxamg FGMRES(30) + classical (PMIS, D2, Pmax 4, θ 0.25, multicolor GS)",
        "nonsym",
        ("convdiff2d", "supg2d"),
    ),
    "fgmres_aggregation_dilu.json": (
        "jaxamg FGMRES(30) + aggregation (SIZE_2, V(0,3), multicolor DILU)",
        "nonsym",
        ("convdiff2d",),
    ),
    "pcg_sa_near_nullspace.json": (
        "jaxamg PCG + smoothed aggregation (near null space, Chebyshev(2) on l1-Jacobi)",
        "aggregation",
        ELASTICITY,
    ),
}
PEERS = ["pyamg-rs", "pyamg-sa", "hypre", "scipy"]
PEER_LABELS = {
    "pyamg-rs": "PyAMG Ruge–Stüben + {accel}",
    "pyamg-sa": "PyAMG smoothed aggregation + {accel}",
    "hypre": "hypre BoomerAMG ({coarsen}, ext+i, Pmax 4, θ {theta:g}, l1-GS) + {krylov}",
    "scipy": "SciPy {method} (no preconditioner)",
}
THREE_D = ("poisson3d", "jump3d", "jumpfem3d", "neumann3d")


def config_path(cfg: str) -> str:
    """A shipped config's file (by name, any case, `.json` optional), a path
    to a JSON file elsewhere, or one of SPECIAL_CONFIGS as it is."""
    if cfg in SPECIAL_CONFIGS:
        return cfg
    stem = cfg[: -len(".json")] if cfg.lower().endswith(".json") else cfg
    shipped = os.path.join(SHIPPED_CONFIGS, stem.upper() + ".json")
    return shipped if os.path.exists(shipped) else os.path.abspath(cfg)


def default_configs() -> list[str]:
    """The configs of ENGINE_CONFIGS, in their order."""
    return list(ENGINE_CONFIGS)


def plan_key(cfg: str) -> str:
    """ENGINE_CONFIGS' key of a config given by file or by shipped name
    (PCG_CLASSICAL_AGG1_CHEBY2 is pcg_classical_agg1_cheby2.json)."""
    key = os.path.basename(cfg)
    if key in ENGINE_CONFIGS or os.path.sep in cfg or key.endswith(".json"):
        return key
    return key.lower() + ".json"


def solver_plan(prob: dict, args) -> list[dict]:
    """The runs for one problem, in order: engine configs, then peers."""
    fam = prob["family"]
    sym = prob["symmetric"]
    plan = []
    if "engine" in args.solvers and args.engine_available:
        for cfg in args.engine_configs:
            label, cls, fams = ENGINE_CONFIGS.get(
                plan_key(cfg), (f"jaxamg {os.path.basename(cfg)}", "custom", None)
            )
            if fams is not None and fam not in fams and not args.all_configs:
                continue
            for thr in args.engine_threads:
                plan.append(
                    {
                        "id": f"engine:{os.path.basename(cfg)}:t{thr}",
                        "kind": "engine",
                        "config": cfg,
                        "label": label,
                        "class": cls,
                        "threads": thr,
                    }
                )
    accel = "cg" if sym else "gmres"
    for peer in PEERS:
        if peer not in args.solvers:
            continue
        if peer.startswith("pyamg"):
            label = PEER_LABELS[peer].format(accel=accel.upper())
            if peer == "pyamg-sa" and prob.get("near_nullspace"):
                label += f", B = the {prob['near_nullspace']} near-null-space vectors"
            plan.append(
                {
                    "id": peer,
                    "kind": "pyamg",
                    "method": peer[-2:],
                    "accel": accel,
                    "label": label,
                }
            )
        elif peer == "hypre" and prob.get("block_dim", 1) > 1:
            # hypre's systems AMG, the unknown approach (num_functions = the
            # block size: strength and interpolation within each function),
            # for a node-interleaved block system. hypre takes no near null
            # space here, so rigid-body modes are ours and PyAMG SA's alone.
            nf = prob["block_dim"]
            coarsen = {"hmis": 10, "pmis": 8}[args.hypre_coarsen]
            for theta in args.hypre_thetas_3d:
                plan.append(
                    {
                        "id": f"hypre-sys-t{theta:g}",
                        "kind": "hypre",
                        "theta": theta,
                        "krylov": "pcg" if sym else "gmres",
                        "coarsen": coarsen,
                        "num_functions": nf,
                        "label": f"hypre BoomerAMG systems AMG (num_functions {nf}, "
                        f"{args.hypre_coarsen.upper()}, ext+i, Pmax 4, θ {theta:g}, l1-GS) + "
                        + ("PCG" if sym else "GMRES(30)")
                        + (f", {args.hypre_np} ranks" if args.hypre_np > 1 else ""),
                    }
                )
        elif peer == "hypre":
            thetas = args.hypre_thetas_3d if fam in THREE_D else args.hypre_thetas_2d
            krylov = "pcg" if sym else "gmres"
            coarsen = {"hmis": 10, "pmis": 8}[args.hypre_coarsen]
            for theta in thetas:
                plan.append(
                    {
                        "id": f"hypre-t{theta:g}",
                        "kind": "hypre",
                        "theta": theta,
                        "krylov": krylov,
                        "coarsen": coarsen,
                        "label": PEER_LABELS["hypre"].format(
                            coarsen=args.hypre_coarsen.upper(),
                            theta=theta,
                            krylov="PCG" if sym else "GMRES(30)",
                        )
                        + (
                            f", {args.hypre_agg_levels} aggressive levels"
                            if args.hypre_agg_levels
                            else ""
                        )
                        + (f", {args.hypre_np} ranks" if args.hypre_np > 1 else ""),
                    }
                )
        elif peer == "scipy":
            method = "cg" if sym else "gmres"
            plan.append(
                {
                    "id": "scipy",
                    "kind": "scipy",
                    "method": method,
                    "label": PEER_LABELS["scipy"].format(method="CG" if sym else "GMRES(30)"),
                }
            )
    return plan
