"""Tests of what is read: the documentation pages, docstrings, examples and benchmarks."""
