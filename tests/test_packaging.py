"""Packaging metadata stays consistent: pyproject.toml, both environment.yml files, CI, README."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import rattler
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parent.parent
ENV_FILES = [REPO / "environment.yml", REPO / "binder" / "environment.yml"]
# conda-forge name -> PyPI name, where they differ.
CONDA_TO_PYPI = {"python-kaleido": "kaleido"}
# Conda entries that are the toolchain, not dependencies of the package.
CONDA_TOOLCHAIN = {"python", "pip"}
LOCAL_PIP = {".", "-e .", "-e.", "./", "-e .."}
# conda and mamba run pip in the environment file's folder: the repo root is "." from the
# top-level file and ".." from binder/.
REPO_FROM = {REPO / "environment.yml": "-e .", REPO / "binder" / "environment.yml": "-e .."}


def _pyproject() -> dict:
    with open(REPO / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def _pyproject_names() -> set[str]:
    proj = _pyproject()["project"]
    reqs = list(proj["dependencies"]) + list(proj["optional-dependencies"]["lab"])
    return {canonicalize_name(Requirement(r).name) for r in reqs}


def _split(env: dict) -> tuple[list[str], list[str]]:
    conda, pip = [], []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            assert set(dep) == {"pip"}, dep
            pip.extend(dep["pip"])
        else:
            conda.append(dep)
    return conda, pip


def test_pyproject_basics():
    proj = _pyproject()["project"]
    assert proj["name"] == "xskbench"
    assert proj["version"] == "0.1.0"
    assert proj["requires-python"] == ">=3.11"
    assert proj["scripts"]["xskbench"] == "xskbench.cli:main"
    assert {"test", "lab"} <= set(proj["optional-dependencies"])
    for r in proj["dependencies"]:
        Requirement(r)


@pytest.mark.parametrize("path", ENV_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_environment_yml(path: Path):
    env = yaml.safe_load(path.read_text())
    assert env["channels"] == ["conda-forge"]
    conda, pip = _split(env)

    names = set()
    for dep in conda:
        spec = rattler.MatchSpec(dep)  # raises on a malformed spec
        name = spec.name.normalized
        names.add(canonicalize_name(CONDA_TO_PYPI.get(name, name)))
    assert any(
        d.startswith("python") and rattler.MatchSpec(d).name.normalized == "python" for d in conda
    )
    assert "pip" in names, "conda env with a pip: section must list pip itself"

    local = [p for p in pip if p.strip() in LOCAL_PIP]
    assert local == [REPO_FROM[path]], \
        f"the package itself must be installed as {REPO_FROM[path]!r}, relative to {path.parent}"
    for p in pip:
        if p.strip() in LOCAL_PIP:
            continue
        names.add(canonicalize_name(Requirement(p).name))  # raises on a malformed requirement

    assert names - CONDA_TOOLCHAIN == _pyproject_names()


def test_binder_pins_exact_versions():
    env = yaml.safe_load((REPO / "binder" / "environment.yml").read_text())
    conda, _ = _split(env)
    for dep in conda:
        spec = rattler.MatchSpec(dep)
        if spec.name.normalized == "pip":
            continue
        assert spec.version is not None, f"{dep}: binder pins need a version"
    py = [d for d in conda if rattler.MatchSpec(d).name.normalized == "python"]
    assert py == ["python=3.11"]


def test_binder_postbuild():
    post = REPO / "binder" / "postBuild"
    text = post.read_text()
    assert text.startswith("#!/usr/bin/env bash")
    assert os.access(post, os.X_OK)
    assert "xskbench.run(" in text
    # a browser for kaleido (Binder has none), proved by a PNG export at build time
    assert "kaleido_get_chrome" in text and "xskbench.export(" in text
    apt = [line.strip() for line in (REPO / "binder" / "apt.txt").read_text().splitlines()
           if line.strip() and not line.startswith("#")]
    assert "libnss3" in apt and "chromium" not in apt  # Ubuntu's chromium is a snap


def test_binder_pip_install_as_mamba_runs_it(tmp_path):
    """The pip: section of binder/environment.yml, installed the way conda and mamba do it
    (a requirements file, pip run in the environment file's folder), into a fresh venv:
    the package it installs is this repository's xskbench."""
    env = yaml.safe_load((REPO / "binder" / "environment.yml").read_text())
    _, pip = _split(env)
    req = tmp_path / "condaenv.requirements.txt"
    req.write_text("\n".join(pip) + "\n")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    # the shared venv's pip, run with the new venv as its target interpreter
    out = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install",
                          "--no-deps", "--quiet", "-r", str(req)],
                         cwd=REPO / "binder", capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    origin = subprocess.run(
        [str(py), "-c", "import importlib.util as u; print(u.find_spec('xskbench').origin)"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"}).stdout.strip()
    assert Path(origin) == REPO / "xskbench" / "__init__.py"


def test_ci_runs_make_test():
    ci = REPO / ".ci" / "run"
    text = ci.read_text()
    assert text.startswith("#!/usr/bin/env bash")
    assert "set -euo pipefail" in text
    assert os.access(ci, os.X_OK)
    assert any(line.strip() == "make test" for line in text.splitlines())


def test_readme_quick_start():
    head = "\n".join((REPO / "README.md").read_text().splitlines()[:15])
    assert "make lab" in head
    assert "make test" in head
