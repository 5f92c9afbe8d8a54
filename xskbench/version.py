"""The package version (pyproject.toml says the same), a module of its own so that any module
can read it without importing the package's ``__init__``."""
__version__ = "0.1.0"
