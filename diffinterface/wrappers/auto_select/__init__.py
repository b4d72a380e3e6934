"""``AutoSelect``: a preparation that prepares several backends, keeps those that agree, and keeps the fastest.

- :mod:`.config`: the selector (frozen, validated, imports nothing);
- :mod:`.adapter`: its adapter, which prepares whole calls (``Adapter.prepares_calls``);
- :mod:`.selection`: the candidates, their agreement and their interleaved timing;
- :mod:`.report`: :func:`explain` and :func:`selected_backend`, read from a preparation.

This package's ``__init__`` imports nothing, so that the selector's module stays cheap to import.
"""
