"""The import structure of the package: no import cycles between its modules, and imports at
the top of a module - never hidden inside a function - except for heavy optional
dependencies that only some entry points need.

Both are read from the source (the AST of every module), not by importing it.
"""
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "xskbench"

#: Third-party packages a function may import where it needs them: each is slow to import
#: (plotting, Dask, browsers) or needed by one entry point only, so that ``import xskbench``,
#: a config check or ``xskbench fields`` do not pay for them.
#: plotly, kaleido, choreographer (kaleido's browser driver): figures and their export.
#: pyarrow: Parquet of sweeps.  dask, distributed: the sweep scheduler.  tqdm: progress
#: bars.  ipywidgets, anywidget, traitlets, IPython: notebook widgets.  playwright: the
#: browser tests' helper.
#: scipy: fits (calibration).  tabulate: Markdown tables of pandas.
LAZY_OK = {"plotly", "kaleido", "pyarrow", "dask", "distributed", "tqdm", "ipywidgets",
           "anywidget", "traitlets", "IPython", "playwright", "scipy", "tabulate",
           "choreographer"}


def _name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The package modules ``node`` imports (the module named, not its parents)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in MODULES]
    base = node.module or ""
    if node.level:
        parts = module.split(".")
        anchor = parts if _is_package(module) else parts[:-1]
        anchor = anchor[:len(anchor) - node.level + 1]
        base = ".".join(anchor + ([base] if base else []))
    out = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES]
    if len(out) < len(node.names) and base in MODULES:  # names defined in ``base`` itself
        out.append(base)
    return out


def _imports(module: str) -> tuple[list[ast.AST], list[ast.AST]]:
    """(imports run when the module loads, imports inside functions). Imports under
    ``if TYPE_CHECKING:`` never run and are left out."""
    top, local = [], []

    def walk(node, in_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                (local if in_function else top).append(child)
            walk(child, in_function or isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    walk(ast.parse(MODULES[module].read_text(encoding="utf-8")), False)
    return top, local


def graph() -> dict[str, set[str]]:
    return {m: {t for node in _imports(m)[0] for t in _targets(m, node)} - {m}
            for m in MODULES}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_the_reader_sees_the_package():
    edges = graph()
    assert "xskbench.devices.record" in edges["xskbench.devices"]
    assert "xskbench.config" in edges["xskbench.cli"]
    assert "xskbench.devices.null.kernel" in edges["xskbench.devices.null.setup"]
    # a cycle is found when there is one
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles():
    found = cycles(graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def _local_imports():
    for module in MODULES:
        for node in _imports(module)[1]:
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""])
            if node.__class__ is ast.ImportFrom and node.level:
                names = ["." * node.level + (node.module or "")]
            if not all(n.split(".")[0] in LAZY_OK for n in names):
                yield f"{MODULES[module].relative_to(PACKAGE.parent)}:{node.lineno}: " \
                      f"{ast.unparse(node)}"


def test_imports_sit_at_the_top_of_the_module():
    offenders = list(_local_imports())
    assert not offenders, "imports inside functions:\n" + "\n".join(offenders)
