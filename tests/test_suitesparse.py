"""jaxamg.matrices.download_suitesparse_matrix, offline: from a pre-seeded
archive in the SuiteSparse layout, from an extracted .mtx, through the
environment variable, and the errors for a missing matrix (naming the file
to place and where) and a damaged archive."""

import io
import tarfile

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from jaxamg import matrices


def _random_matrix(seed: int) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    A = sp.random(40, 40, density=0.1, random_state=rng, format="csr") + sp.identity(40)
    return sp.csr_matrix(A)


def _seed_archive(root, group: str, name: str, A) -> None:
    """The collection's archive layout: <name>.tar.gz holding <name>/<name>.mtx."""
    text = io.BytesIO()
    scipy.io.mmwrite(text, A)
    data = text.getvalue()
    folder = root / group / name
    folder.mkdir(parents=True)
    with tarfile.open(folder / f"{name}.tar.gz", "w:gz") as tar:
        info = tarfile.TarInfo(f"{name}/{name}.mtx")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))


def _unreachable() -> str:
    return "http://127.0.0.1:9/MM"  # the discard port: connection refused at once


def test_loads_a_preseeded_archive_and_then_its_extracted_file(tmp_path):
    A = _random_matrix(1)
    _seed_archive(tmp_path, "HB", "toy", A)
    B = matrices.download_suitesparse_matrix("HB/toy", cache_dir=tmp_path, base_url=_unreachable())
    assert isinstance(B, sp.csr_matrix)
    np.testing.assert_allclose(B.toarray(), A.toarray(), rtol=1e-15)
    assert (tmp_path / "HB" / "toy" / "toy.mtx").is_file()
    assert not list((tmp_path / "HB" / "toy").glob(".*part"))  # no temporary left
    # Second call: the extracted file alone is enough; group as an argument.
    (tmp_path / "HB" / "toy" / "toy.tar.gz").unlink()
    C = matrices.download_suitesparse_matrix(
        "toy", group="HB", cache_dir=tmp_path, dtype=np.float32, base_url=_unreachable()
    )
    assert C.dtype == np.float32
    np.testing.assert_allclose(C.toarray(), A.toarray(), rtol=1e-6)


def test_cache_from_environment_and_group_found_in_cache(tmp_path, monkeypatch):
    A = _random_matrix(2)
    _seed_archive(tmp_path, "Norris", "small", A)
    monkeypatch.setenv("JAXAMG_SUITESPARSE_CACHE", str(tmp_path))
    B = matrices.download_suitesparse_matrix("small", base_url=_unreachable())
    np.testing.assert_allclose(B.toarray(), A.toarray(), rtol=1e-15)


def test_missing_matrix_offline_names_the_file_to_place(tmp_path):
    with pytest.raises(ConnectionError) as e:
        matrices.download_suitesparse_matrix(
            "HB/absent", cache_dir=tmp_path, base_url=_unreachable(), timeout=5
        )
    message = str(e.value)
    assert "http://127.0.0.1:9/MM/HB/absent.tar.gz" in message
    assert str(tmp_path / "HB" / "absent" / "absent.tar.gz") in message
    assert not (tmp_path / "HB" / "absent" / "absent.tar.gz").exists()


def test_bad_names_and_damaged_archives_are_named(tmp_path):
    with pytest.raises(ValueError, match="the group of 'lonely' is needed"):
        matrices.download_suitesparse_matrix("lonely", cache_dir=tmp_path)
    with pytest.raises(ValueError, match="`name` must be a SuiteSparse name"):
        matrices.download_suitesparse_matrix("../etc", group="HB", cache_dir=tmp_path)
    folder = tmp_path / "HB" / "broken"
    folder.mkdir(parents=True)
    (folder / "broken.tar.gz").write_bytes(b"not an archive")
    with pytest.raises(ValueError, match="is not a SuiteSparse archive holding broken/broken.mtx"):
        matrices.download_suitesparse_matrix("HB/broken", cache_dir=tmp_path)
