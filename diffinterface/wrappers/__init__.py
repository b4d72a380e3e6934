"""Backends made of backends: ``SecondOrder`` (``second_order.py``).

Each wrapper registers its selector here; its adapter module is imported on first use.
"""

from ..core import register_backend
from ..selectors import SecondOrder

register_backend(SecondOrder, "diffinterface.wrappers.second_order:SecondOrderAdapter")
