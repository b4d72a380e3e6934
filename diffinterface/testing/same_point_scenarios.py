"""The kit's cases for same-point preparations, one per backend and operator (pushforward, pullback, hvp).

Each case prepares at one x with ``prepare_<op>_same_point`` and checks that:

- calls with batches of seeds (one seed, then three, each prepared) give the
  ordinary operator's results and values, at the prepared x and at a copy of
  it (equal values, another object); for hvp also of a function whose
  Hessian is structurally zero (``sum(abs(x))``: torch returns such a
  derivative as an immutable ZeroTensor), which must come back as arrays,
  or be refused as the ordinary hvp refuses it (the complex step);
- with ``batch_size=2`` (selectors that take one), three seeds give the same
  results, and ``di.batch_size(prep)`` is at most 2 where it is known;
- a call at an x of other values raises ``PreparationMismatchError`` naming x,
  also for a preparation made with ``strict=False`` (which skips the
  signature, never the point);
- x and the seeds are left unchanged.

    >>> import diffinterface as di
    >>> from diffinterface.testing.same_point_scenarios import same_point_cases
    >>> [c.id for c in same_point_cases({"fd": di.AutoFiniteDiff()})]
    ['fd-same_point-pushforward', 'fd-same_point-pullback', 'fd-same_point-hvp']
    >>> same_point_cases({"fd": di.AutoFiniteDiff()})[2].check().status
    'passed'
"""

from __future__ import annotations

import numpy as np

from ..errors import PreparationMismatchError
from ..families import array_namespace, as_numpy
from .cases import ProbeCase
from .batch_scenarios import takes_batch_size, with_batch_size


def _vector_f(x):
    xp = array_namespace(x)
    return xp.sin(x) * xp.sum(x * x)


def _scalar_f(x):
    xp = array_namespace(x)
    return xp.sum(xp.exp(x[1:] * x[:-1])) + xp.sum(x**4)


def _zero_hessian_f(x):
    xp = array_namespace(x)
    return xp.sum(xp.abs(x))


#: operator -> (functions, whether seeds are shaped like f(x) rather than x)
_OPERATORS = {
    "pushforward": ((_vector_f,), False),
    "pullback": ((_vector_f,), True),
    "hvp": ((_scalar_f, _zero_hessian_f), False),
}


def _close(got, wanted):
    return all(
        np.allclose(as_numpy(g), as_numpy(w), rtol=1e-9, atol=1e-9) for g, w in zip(got, wanted)
    )


class SamePointCase(ProbeCase):
    """One backend and one operator's same-point preparation; ``check()`` raises on failure."""

    kind = "same_point"

    def _run(self, found):
        import diffinterface as di

        name, backend = self.operator, self.backend
        functions, like_output = _OPERATORS[name]
        plain = getattr(di, name)
        x = np.linspace(0.2, 1.1, 5)
        rng = np.random.default_rng(3)
        f = functions[0]
        shape = np.shape(f(x)) if like_output else x.shape
        batches = [(rng.uniform(-1, 1, shape),), tuple(rng.uniform(-1, 1, shape) for _ in range(3))]
        before = [x.copy()] + [s.copy() for b in batches for s in b]
        for g in functions:
            for seeds in batches:
                self._same_results(di, g, x, seeds, found, may_refuse=g is not f)
        seeds = batches[-1]
        prep = getattr(di, f"prepare_{name}_same_point")(f, backend, x, seeds)
        if takes_batch_size(backend):
            bounded = with_batch_size(backend, 2)
            prep_2 = getattr(di, f"prepare_{name}_same_point")(f, bounded, x, seeds)
            if not _close(
                plain(f, bounded, x, seeds, prep=prep_2), plain(f, backend, x, seeds, prep=prep)
            ):
                found.append(
                    f"{name} with batch_size=2 differs from the whole batch of {len(seeds)} seeds"
                )
            if (di.batch_size(prep_2) or 0) > 2:
                found.append(
                    f"{name} with batch_size=2: di.batch_size(prep) = {di.batch_size(prep_2)}"
                )
        loose = getattr(di, f"prepare_{name}_same_point")(f, backend, x, seeds, strict=False)
        for p, label in ((prep, ""), (loose, " (strict=False)")):
            try:
                plain(f, backend, x + 0.5, seeds, prep=p)
                found.append(f"{name} at another x{label}: no error")
            except PreparationMismatchError as error:
                if "x" not in str(error).split(":")[0]:
                    found.append(f"{name} at another x{label}: the error does not name x: {error}")
        after = [x] + [s for b in batches for s in b]
        if not all(np.array_equal(a, b) for a, b in zip(after, before)):
            found.append("x or a seed was modified")

    def _same_results(self, di, f, x, seeds, found, may_refuse=False):
        """Note where a same-point preparation's results and value differ from the ordinary ones (``may_refuse``:
        or where it does not refuse f as the ordinary preparation does)."""
        name, backend = self.operator, self.backend
        op = di.core.OPERATORS[name]
        plain, valued = getattr(di, name), getattr(di, op.valued)
        what = f"{name} of {f.__name__}, {len(seeds)} seeds"
        try:
            ordinary = getattr(di, f"prepare_{name}")(f, backend, x, seeds)
            wanted = valued(f, backend, x, seeds, prep=ordinary)
        except Exception as error:
            if not may_refuse:
                raise
            try:
                getattr(di, name)(
                    f,
                    backend,
                    x,
                    seeds,
                    prep=getattr(di, f"prepare_{name}_same_point")(f, backend, x, seeds),
                )
            except type(error):
                return
            found.append(
                f"{what}: the ordinary {name} raised {type(error).__name__}, the same-point one did not"
            )
            return
        prep = getattr(di, f"prepare_{name}_same_point")(f, backend, x, seeds)
        for at, label in ((x, "the prepared x"), (x.copy(), "a copy of x")):
            got = valued(f, backend, at, seeds, prep=prep)
            if not _close(got[1], wanted[1]) or not _close((got[0],), (wanted[0],)):
                found.append(f"{op.valued} at {label}, {what}: {got}, expected {wanted}")
            if not _close(plain(f, backend, at, seeds, prep=prep), wanted[1]):
                found.append(f"{what} at {label} differs from the ordinary {name}")


def same_point_cases(backends, operators=None):
    """A :class:`SamePointCase` per backend (a selector or a dict id -> selector) and operator."""
    if not isinstance(backends, dict):
        backends = {type(backends).__name__: backends}
    names = [op for op in _OPERATORS if operators is None or op in operators]
    return [SamePointCase(k, b, op) for k, b in backends.items() for op in names]
