"""Project-wide pytest configuration.

The conformance kit's plugin adds ``--di-backends=id,id`` (or ``DI_BACKENDS``)
and the ``di_backend`` / ``di_case`` fixtures; ``pytester`` lets
``tests/core/test_kit.py`` run the plugin in a separate pytest session.

JAX's persistent compilation cache is on for the suite (a folder in the
system's temporary directory; set ``JAX_COMPILATION_CACHE_DIR`` to choose
another). Eager JAX compiles every operation for every new shape, the suite
meets the same operations at the same shapes in many tests, in both xdist
workers, in the documentation pages' subprocesses and again in the
``--di-matrix=rest`` run: each is compiled once. Results do not depend on it.
"""

import os
import tempfile

pytest_plugins = ["diffinterface.testing.pytest_plugin", "pytester"]

#: every compilation is cached, however short: most of the suite's are eager operations
_JAX_CACHE = {
    "JAX_COMPILATION_CACHE_DIR": os.path.join(tempfile.gettempdir(), "diffinterface-tests-jax"),
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
}
for _name, _value in _JAX_CACHE.items():
    os.environ.setdefault(_name, _value)  # subprocesses (pages, examples) inherit it

try:  # JAX read the variables if it was imported before this file (a plugin importing it)
    import jax
except ImportError:  # a missing framework fails in the tests that need it, not here
    pass
else:
    jax.config.update("jax_compilation_cache_dir", os.environ["JAX_COMPILATION_CACHE_DIR"])
    jax.config.update(
        "jax_persistent_cache_min_compile_time_secs",
        float(os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"]),
    )
    jax.config.update(
        "jax_persistent_cache_min_entry_size_bytes",
        int(os.environ["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"]),
    )
