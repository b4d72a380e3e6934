"""What the probes of vectorized sweeps share: a known Jacobian, seeds both ways, a known Hessian.

TensorFlow's ``pfor`` vectorizes the sweeps behind ``tape.jacobian``, where a framework kernel's
defect (:mod:`.batched_matmul`) or a rule's axis (:mod:`.rolled_axes`) once gave wrong numbers;
those probes check every kind of sweep through one operation with :func:`expect_right_sweeps`.
"""

from __future__ import annotations


from ...operators import hessian, jacobian, pullback, pushforward


def expect_right_sweeps(
    problems,
    backend,
    zero,
    *,
    f,
    x,
    expected_jacobian,
    tangents,
    cotangents,
    scalar_f,
    expected_hessian,
    through,
    tolerances,
):
    """Record what is wrong in the jacobian, the hessian, the pushforwards and the pullbacks.

    Parameters
    ----------
    problems : Problems
        Where the problems found are recorded.
    backend : AbstractBackend
        The selector under test.
    zero : bool
        The backend's derivatives are zeros by design (only shapes are checked).
    f : callable
        A function of x through the operation.
    x : numpy.ndarray
        The point.
    expected_jacobian : numpy.ndarray
        f's Jacobian at x, of shape ``f(x).shape + x.shape``.
    tangents, cotangents : tuple of numpy.ndarray
        Several seeds of one pushforward (shaped like x) and of one pullback (like f(x)).
    scalar_f : callable
        A scalar function of x through the same operation.
    expected_hessian : numpy.ndarray
        scalar_f's Hessian at x.
    through : str
        The operation, as the problems name it (``"through roll along axis=-1"``).
    tolerances : callable
        ``tolerances(order, expected)``: the ``rtol`` and ``atol`` (a dict) of one result.
    """
    y_shape = expected_jacobian.shape[: expected_jacobian.ndim - x.ndim]
    flat = expected_jacobian.reshape(-1, x.size)
    for name, operator, function, expected, order in (
        ("jacobian", jacobian, f, expected_jacobian, 1),
        ("hessian", hessian, scalar_f, expected_hessian, 2),
    ):
        problems.expect_result(
            f"{name} {through}",
            lambda: operator(function, backend, x),
            expected,
            like=x,
            zero=zero,
            **tolerances(order, expected),
        )
    for name, seeds, call, expected in (
        (
            "pushforward",
            "tangents",
            lambda: pushforward(f, backend, x, tangents),
            [(flat @ t.reshape(-1)).reshape(y_shape) for t in tangents],
        ),
        (
            "pullback",
            "cotangents",
            lambda: pullback(f, backend, x, cotangents),
            [(u.reshape(-1) @ flat).reshape(x.shape) for u in cotangents],
        ),
    ):
        try:
            results = call()
        except Exception as raised:  # noqa: BLE001 - the problem is reported, not raised
            problems.raised(f"{name} of {len(expected)} {seeds} {through}", raised, "a result")
            continue
        for k, (got, want) in enumerate(zip(results, expected)):
            problems.check_result(
                f"{name} {k} of {len(expected)} {through}",
                got,
                want,
                like=x,
                zero=zero,
                **tolerances(1, want),
            )
