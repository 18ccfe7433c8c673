"""SuiteSparse Matrix Collection loader with a local cache.

A matrix lives in the collection as ``<base_url>/<group>/<name>.tar.gz``, an
archive whose ``<name>/<name>.mtx`` is the Matrix Market file. The cache
keeps both under ``<cache>/<group>/<name>/``; the cache folder is the
``cache_dir`` argument, else ``$JAXAMG_SUITESPARSE_CACHE``, else
``~/.cache/jaxamg/suitesparse``. Every file is written to a temporary name
and renamed, so an interrupted download or extraction never leaves a
truncated file that a later call would read. Without a network, a matrix
whose archive (or .mtx) was placed in the cache loads the same way; a
missing one raises an error naming the file to place and where.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import scipy.io
import scipy.sparse as sp

CACHE_ENV = "JAXAMG_SUITESPARSE_CACHE"
WHERE = "download_suitesparse_matrix"


def cache_root(cache_dir: Any = None) -> Path:
    """The cache folder: `cache_dir`, $JAXAMG_SUITESPARSE_CACHE, or the default."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    return Path.home() / ".cache" / "jaxamg" / "suitesparse"


def _check_part(label: str, value: Any) -> str:
    if not isinstance(value, str) or not value or "/" in value or value in (".", ".."):
        raise ValueError(
            f"{WHERE}: `{label}` must be a SuiteSparse {label} such as 'HB' or 'bcsstk01', "
            f"got {value!r}"
        )
    return value


def _group_and_name(name: Any, group: Any, root: Path) -> tuple[str, str]:
    if isinstance(name, str) and name.count("/") == 1 and group is None:
        group, name = name.split("/")
    name = _check_part("name", name)
    if group is not None:
        return _check_part("group", group), name
    # No group: a matrix already in the cache is found under any group.
    found = sorted(p.parent.name for p in root.glob(f"*/{name}") if p.is_dir())
    if len(found) == 1:
        return found[0], name
    raise ValueError(
        f"{WHERE}: the group of {name!r} is needed to find it in the collection"
        + (f" (the cache holds it under several groups: {found})" if found else "")
        + f"; pass group='HB' (for example) or name='HB/{name}'"
    )


def _write_atomically(target: Path, fill) -> None:
    """Calls fill(file) on a temporary file beside `target`, then renames it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            fill(f)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _download(url: str, archive: Path, mtx: Path, timeout: float) -> None:
    def fill(f):
        with urllib.request.urlopen(url, timeout=timeout) as response:
            shutil.copyfileobj(response, f)

    try:
        _write_atomically(archive, fill)
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = " ".join(str(e).split()) or type(e).__name__
        raise ConnectionError(
            f"{WHERE}: could not download {url} ({reason}). Without a network, place that "
            f"archive at {archive} (or its extracted Matrix Market file at {mtx}) and call "
            "again"
        ) from None


def _extract(archive: Path, name: str, mtx: Path) -> None:
    member = f"{name}/{name}.mtx"
    try:
        with tarfile.open(archive, "r:gz") as tar:
            source = tar.extractfile(member)
            if source is None:
                raise KeyError(member)
            _write_atomically(mtx, lambda f: shutil.copyfileobj(source, f))
    except (tarfile.TarError, KeyError, OSError, EOFError) as e:
        reason = " ".join(str(e).split()) or type(e).__name__
        raise ValueError(
            f"{WHERE}: {archive} is not a SuiteSparse archive holding {member} ({reason}); "
            "delete it and call again to download it, or place the collection's archive there"
        ) from None


def download_suitesparse_matrix(
    name: str,
    group: str | None = None,
    cache_dir: Any = None,
    dtype: Any = None,
    base_url: str = "https://sparse.tamu.edu/MM",
    timeout: float = 60.0,
) -> sp.csr_matrix:
    """Loads matrix `name` ("group/name", or with `group`) of the SuiteSparse
    Matrix Collection as a SciPy CSR matrix, downloading it into the cache
    on first use. `dtype` converts the values (default: as stored, float64
    for real and pattern matrices)."""
    root = cache_root(cache_dir)
    group, name = _group_and_name(name, group, root)
    folder = root / group / name
    mtx = folder / f"{name}.mtx"
    archive = folder / f"{name}.tar.gz"
    if not mtx.is_file():
        if not archive.is_file():
            _download(f"{base_url.rstrip('/')}/{group}/{name}.tar.gz", archive, mtx, timeout)
        _extract(archive, name, mtx)
    try:
        A = sp.csr_matrix(scipy.io.mmread(str(mtx)))
    except (ValueError, OSError, UnicodeDecodeError, IndexError) as e:
        reason = " ".join(str(e).split()) or type(e).__name__
        raise ValueError(
            f"{WHERE}: {mtx} is not a readable Matrix Market file ({reason}); delete it (and "
            "the archive beside it) and call again"
        ) from None
    if dtype is not None:
        A = A.astype(np.dtype(dtype))
    A.sort_indices()
    return A
