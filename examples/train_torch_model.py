"""Train a small torch MLP with gradients from diffinterface, the model's ``.grad`` untouched.

Run: python examples/train_torch_model.py

``di.module_function`` turns a model and a loss into ``f(params, *batch)``
over ``dict(model.named_parameters())``; ``di.value_and_gradient``, prepared
once, gives the loss and a dict of gradients at every step, and an optimizer
(Adam here) steps on them. The gradients are handed to the optimizer through
``.grad`` only inside the step, as any gradient source would be.
"""

import torch

import diffinterface as di


def main():
    torch.manual_seed(0)
    inputs = torch.randn(256, 4)
    targets = torch.sin(inputs @ torch.tensor([[1.0], [-2.0], [0.5], [0.0]])) + 0.05 * torch.randn(
        256, 1
    )
    model = torch.nn.Sequential(torch.nn.Linear(4, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))

    def mse(model, inputs, targets):
        return ((model(inputs) - targets) ** 2).mean()

    f, params = di.module_function(model, mse)
    backend = di.AutoTorch()
    batch = (di.Constant(inputs), di.Constant(targets))
    prep = di.prepare_gradient(f, backend, params, *batch)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)

    losses = []
    for step in range(60):
        loss, grads = di.value_and_gradient(f, backend, params, *batch, prep=prep)
        if any(p.grad is not None for p in model.parameters()):
            raise SystemExit("diffinterface touched the model's .grad")
        for name, p in model.named_parameters():
            p.grad = grads[name]
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(float(loss))
        if step % 15 == 0:
            print(f"step {step:3d}  loss {losses[-1]:.4f}")
    print(f"step {len(losses) - 1:3d}  loss {losses[-1]:.4f}")
    if not losses[-1] < 0.25 * losses[0]:
        raise SystemExit(f"the loss did not fall: {losses[0]:.4f} -> {losses[-1]:.4f}")
    print(
        f"loss fell from {losses[0]:.3f} to {losses[-1]:.3f}; diffinterface never touched the model's .grad"
    )


if __name__ == "__main__":
    main()
