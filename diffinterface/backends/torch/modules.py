"""Models as functions of their parameters: a torch ``nn.Module`` and a loss as ``(f, params)``.

    >>> import torch, diffinterface as di
    >>> model = torch.nn.Linear(3, 1)
    >>> def loss(model, inputs, targets):
    ...     return ((model(inputs) - targets) ** 2).mean()
    >>> f, params = di.module_function(model, loss)
    >>> batch = (torch.ones(4, 3), torch.zeros(4, 1))
    >>> g = di.gradient(f, di.AutoTorch(), params, di.Constant(batch[0]), di.Constant(batch[1]))
    >>> sorted(g), model.weight.grad is None
    (['bias', 'weight'], True)

Importing this module imports no framework; torch is imported at the first call.
"""

from __future__ import annotations


def module_function(module, loss):
    """``(f, params)`` for differentiating ``loss`` with respect to a torch module's parameters.

    Parameters
    ----------
    module : torch.nn.Module
        The model. Its parameters are never modified and their ``.grad`` is never touched.
    loss : callable
        ``loss(model, *contexts) -> scalar``, where ``model(*inputs)`` runs ``module``
        with the parameters being differentiated and the module's current buffers
        (batch-norm statistics...): ``module`` itself when they are its own parameters,
        else through ``torch.func.functional_call``. Or a torch criterion, whose
        signature is ``(input, target)``: a loss module (``torch.nn.MSELoss()``) or a
        function of ``torch.nn.functional`` (``mse_loss``); then the contexts are the
        model's inputs followed by the target, and
        ``f(params, *inputs, target) = loss(model(*inputs), target)``.

    Returns
    -------
    f : callable
        ``f(params, *contexts) = loss(model, *contexts)``: pass it to any operator with
        ``params`` as ``x`` and the batch as ``di.Constant`` contexts.
    params : dict
        ``dict(module.named_parameters())``, the module's own parameters (update them in
        place under ``torch.no_grad()`` to train).

    Examples
    --------
    >>> import torch, diffinterface as di
    >>> model = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    >>> f, params = di.module_function(model, lambda model, x: model(x).sum())
    >>> value, g = di.value_and_gradient(f, di.AutoTorch(), params, di.Constant(torch.ones(5, 2)))
    >>> g["0.weight"].shape
    torch.Size([4, 2])

    A criterion as the loss: the batch's inputs, then its targets.

    >>> f, params = di.module_function(torch.nn.Linear(2, 1), torch.nn.MSELoss())
    >>> g = di.gradient(f, di.AutoTorch(), params, di.Constant(torch.ones(5, 2)), di.Constant(torch.zeros(5, 1)))
    >>> g["weight"].shape
    torch.Size([1, 2])
    """
    if not callable(loss):
        raise TypeError(
            f"loss: expected a callable loss(model, *contexts); got {type(loss).__name__}"
        )
    named_parameters = getattr(module, "named_parameters", None)
    if named_parameters is None or not callable(getattr(module, "named_buffers", None)):
        raise TypeError(f"module: expected a torch.nn.Module; got {type(module).__name__}")
    if not any(True for _ in named_parameters()):
        raise ValueError(
            f"module: expected a torch.nn.Module with parameters to differentiate; {type(module).__name__} has "
            "none. A criterion (input, target) such as torch.nn.MSELoss() goes second, as the loss: "
            "di.module_function(model, torch.nn.MSELoss())"
        )
    if _is_criterion(loss):
        loss = _applied_to_outputs(loss)
    from torch.func import functional_call

    # Where each parameter lives (its submodule and local name), to see per call, from the module's
    # live state, whether ``params`` are the module's own tensors: then the module runs as it is, as
    # in a plain ``loss.backward()`` step (the adapter differentiates parameters that already
    # require grad in place); any other tensors are swapped in by functional_call.
    slots = tuple(
        (name, module.get_submodule(name.rpartition(".")[0])._parameters, name.rpartition(".")[2])
        for name, _ in named_parameters()
    )

    def runs_as_is(params):
        if len(params) != len(slots):
            return False
        for name, own, local in slots:
            if own.get(local) is not params.get(name):
                return False
        return True

    def f(params, *contexts):
        if params.__class__ is dict and runs_as_is(params):
            return loss(module, *contexts)

        # Buffers (batch-norm statistics...) missing from params stay the module's own.
        def model(*args, **kwargs):
            return functional_call(module, params, args, kwargs)

        return loss(model, *contexts)

    return f, dict(named_parameters())


def _is_criterion(loss):
    """True for a torch criterion, of signature ``(input, target)``: a loss module or a functional loss."""
    return (
        callable(getattr(loss, "named_parameters", None))
        or getattr(loss, "__module__", None) == "torch.nn.functional"
    )


def _applied_to_outputs(criterion):
    """``loss(model, *inputs, target) = criterion(model(*inputs), target)``."""
    name = getattr(criterion, "__name__", None) or type(criterion).__name__

    def loss(model, *contexts):
        if len(contexts) < 2:
            raise TypeError(
                f"loss: the criterion {name} takes (input, target): pass the model's inputs and then the "
                f"target as contexts, f(params, di.Constant(inputs), di.Constant(target)); got "
                f"{len(contexts)} context{'s' if len(contexts) != 1 else ''}"
            )
        *inputs, target = contexts
        return criterion(model(*inputs), target)

    return loss
