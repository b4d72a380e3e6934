"""Wrapped backends the GPU check adds to the kit's own (``--di-backends=...,tools.gpu_check.backends:WRAPPED``)."""

import diffinterface as di

WRAPPED = {
    "jax-over-jax": di.SecondOrder(di.AutoJAX(mode="forward"), di.AutoJAX()),
    "torch-over-torch": di.SecondOrder(di.AutoTorch(mode="forward"), di.AutoTorch()),
    "finitediff-over-jax": di.SecondOrder(di.AutoFiniteDiff(), di.AutoJAX()),
    "sparse-jax": di.AutoSparse(di.AutoJAX()),
    "sparse-torch": di.AutoSparse(di.AutoTorch()),
}
