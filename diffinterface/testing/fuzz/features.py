"""Options of an array program's check: workers, AutoSelect, same-point contexts, structured outputs.

Each option (:data:`FEATURES`) is drawn for a program with a modest
probability and checks one more way of calling the library on it, against
the same float64 reference:

- ``"workers"``: ``AutoFiniteDiff(workers=...)`` (a backend of the campaign
  with a ``workers`` field, a thread pool or a process pool made once per
  campaign) prepares ``gradient`` of ``scale * g`` or ``jacobian`` of
  ``scale * f``, where ``scale`` is a global of f's; the prepared call must
  follow ``scale`` as it changes between calls;
- ``"autoselect"``: ``di.AutoSelect`` of two or three of the campaign's
  backends, an unprepared ``value_and_*`` call (the value and each
  derivative right);
- ``"same_point"``: ``prepare_pushforward_same_point``,
  ``prepare_pullback_same_point`` or ``prepare_hvp_same_point`` of
  ``c * f`` (``c * g``) with ``c`` a ``di.Constant`` array, called with
  several seeds; after ``c`` changes in place the call must raise
  :class:`~diffinterface.PreparationMismatchError`;
- ``"outputs"``: f returning a pair, a triple or a dict of arrays, or a 0-d
  array, for ``jacobian`` and, at a 0-d x, ``derivative`` and
  ``second_derivative``: the result has f's structure and is right, or the
  call raises a TypeError (for a pair at a 0-d x, one naming ``has_aux=True``);
  a 0-d array output must give its derivative.

    >>> FEATURES
    ('workers', 'autoselect', 'same_point', 'outputs')
"""

from __future__ import annotations

import collections
import multiprocessing
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np

from .feature_checks import check_autoselect, check_workers, families
from .feature_outputs import check_outputs, check_same_point

__all__ = ["FEATURES", "PERCENT", "Options", "Pools", "families", "known_features"]

FEATURES = ("workers", "autoselect", "same_point", "outputs")
#: the default chance, in percent, that a program's check draws each option
PERCENT = 10


class Pools:
    """A thread pool and a process pool of one process, each made at its first use; :meth:`close` ends them."""

    def __init__(self):
        self._pools: dict = {}

    def get(self, kind):
        if kind not in self._pools:
            if kind == "thread":
                self._pools[kind] = ThreadPoolExecutor(2)
            else:
                methods = multiprocessing.get_all_start_methods()
                method = "forkserver" if "forkserver" in methods else "spawn"
                self._pools[kind] = ProcessPoolExecutor(
                    1, mp_context=multiprocessing.get_context(method)
                )
        return self._pools[kind]

    def close(self):
        for pool in self._pools.values():
            pool.shutdown(wait=True, cancel_futures=True)
        self._pools.clear()


class Options:
    """The options a campaign draws for its array programs: which, how often, their pools and counts.

    Whether a program's check draws an option is decided by a numpy generator seeded with the
    campaign's seed (hypothesis's integers favour small values, which would draw each option far
    more often than ``percent`` says); :meth:`close` ends the pools.

        >>> options = Options(("outputs",), 100, seed=0)
        >>> options.features, options.counts
        (('outputs',), Counter())
    """

    def __init__(self, features=FEATURES, percent=PERCENT, seed=0, counts=None):
        self.features, self.percent = known_features(features), percent
        self.random = np.random.default_rng(seed)
        self.pools = Pools()
        #: option -> the programs it was checked with
        self.counts = collections.Counter() if counts is None else counts

    def check(self, data, program, point, case):
        """Draw each option with ``percent`` % chance and check it on ``program`` at ``point``; the outcomes.

        ``case`` holds the campaign's ``backends`` (id -> selector), the ``chosen`` ids,
        ``reference`` (backend -> its reference dict), ``zero`` (ids returning zeros) and ``rng``.
        """
        case = {**case, "pools": self.pools}
        outcomes = []
        for feature in self.features:
            if self.random.uniform(0, 100) < self.percent:
                found = _CHECKS[feature](data, program, point, case)
                self.counts[feature] += bool(found)
                outcomes += found
        return outcomes

    def close(self):
        self.pools.close()


def known_features(features):
    """``features`` as a tuple, after checking each is one of :data:`FEATURES`.

    >>> known_features(["outputs"])
    ('outputs',)
    """
    unknown = sorted(set(features) - set(FEATURES))
    if unknown:
        raise ValueError(f"features: expected some of {', '.join(FEATURES)}; got {unknown}")
    return tuple(features)


_CHECKS = {
    "workers": check_workers,
    "autoselect": check_autoselect,
    "same_point": check_same_point,
    "outputs": check_outputs,
}
