"""Tests of one AD library each (jax, torch, tensorflow, autograd) and its framework's specifics."""
