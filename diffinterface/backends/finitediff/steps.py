"""AutoFiniteDiff's steps: the relative and absolute step of each method and dtype, per entry where a
tree's leaves of several dtypes share the flat x (see the package docstring)."""

from __future__ import annotations

import numpy as np

_DEFAULT_POWER = {"forward": 1 / 2, "central": 1 / 3, "complex": 1.0, "adaptive": 1 / 3}


def default_rel_step(method, dtype):
    """The default relative (and absolute) step of ``method`` for ``dtype``: a power of its eps.

    >>> default_rel_step("central", "float64") == float(np.finfo("float64").eps) ** (1 / 3)
    True
    """
    return float(np.finfo(dtype).eps) ** _DEFAULT_POWER[method]


class FiniteDiffSteps:
    """The step rules of the finite-difference adapter (a mixin: reads ``backend`` and ``method``)."""

    def _step(self, x, t):
        """Step along tangent ``t`` at ``x``, scaled to x's dtype and magnitude."""
        return self._step_rule(np.asarray(x).dtype)(x, t)

    def _step_rule(self, dtype, problem=None):
        """``step(x, t)`` for arrays of ``dtype``: the constants looked up once, at preparation.

        For the flat x of a tree whose leaves have several dtypes (``problem.leaf_dtypes``), each
        entry has its own relative and absolute step; the step along ``t`` is the largest over its support.
        """
        rel, absolute = (
            self._entry_rel_abs(problem) if problem is not None else self._rel_abs(dtype)
        )
        if not np.isscalar(rel):

            def step_per_entry(x, t):
                t_abs = np.abs(t)
                support = t_abs != 0
                t_max = t_abs.max()
                if not t_max:
                    return float(np.max(absolute))
                scale = float(np.max(rel * np.abs(x), where=support, initial=0.0))
                return max(scale, float(np.max(absolute, where=support, initial=0.0))) / float(
                    t_max
                )

            return step_per_entry

        def step(x, t):
            t_abs = np.abs(t)
            t_max = t_abs.max()
            if not t_max:
                return absolute
            # max |x_i| over the support of t
            scale = float(np.max(np.abs(x), where=t_abs != 0, initial=0.0))
            return max(rel * scale, absolute) / float(t_max)

        return step

    def _entry_rel_abs(self, problem):
        """(rel, abs) for x's entries: scalars, or arrays when a tree's leaves of several dtypes share x."""
        if problem.leaf_dtypes is None:
            return self._rel_abs(np.asarray(problem.x).dtype)
        rel, absolute = np.empty(problem.x_size), np.empty(problem.x_size)
        for entries, leaf_dtype in problem.leaf_dtypes:
            rel[entries], absolute[entries] = self._rel_abs(np.dtype(leaf_dtype))
        return rel, absolute

    def _coordinate_steps(self, problem, dtype):
        """``steps_at(flat) -> h``: the steps ``h_i = max(rel * |x_i|, abs)`` along each coordinate of a call's
        flat x, in ``dtype``: one scalar when every entry takes the same step (every ``rel * |x_i|`` under
        ``abs``, the common case: one scalar move and divisor), else one per entry, made exact in each
        leaf's dtype for a tree whose leaves have several."""
        rel, absolute = self._entry_rel_abs(problem)
        leaf_dtypes = problem.leaf_dtypes
        if np.isscalar(rel):
            floor = dtype.type(absolute)

            def steps_at(flat):
                # in x's dtype, as the per-entry steps are: max(rel |x_i|) is rel max|x_i| exactly
                if flat.size == 0 or rel * np.max(np.abs(flat)) <= absolute:
                    return floor
                return np.maximum(rel * np.abs(flat), absolute).astype(dtype)

            return steps_at

        def steps_per_entry(flat):
            steps = np.maximum(rel * np.abs(flat), absolute).astype(dtype)
            # exact in each leaf's dtype: x + h cast back to a narrower leaf moves it by h
            for entries, leaf_dtype in leaf_dtypes:
                if leaf_dtype != steps.dtype.name:
                    moved = (flat[entries] + steps[entries]).astype(leaf_dtype).astype(steps.dtype)
                    steps[entries] = moved - flat[entries]
            return steps

        return steps_per_entry

    def _rel_abs(self, dtype):
        """The relative and absolute step for this method and dtype (defaults scale with eps)."""
        rel = self.backend.rel_step
        if rel is None:
            rel = default_rel_step(self.method, dtype)
        absolute = self.backend.abs_step if self.backend.abs_step is not None else rel
        return rel, absolute
