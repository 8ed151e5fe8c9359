"""The package's version, in a module of its own so that the modules recording it (the pandas
metadata's "creator") need not import the package face (tests/docs/test_layering.py)."""
__version__ = "0.1.0"
