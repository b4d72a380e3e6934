"""Tests of one feature each across backends: aux, batching, complex, pytrees, sparse, second order, workers, wrappers, scipy, fuzz."""
