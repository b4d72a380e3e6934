"""A numpy-only simulator inside a torch loss, differentiated by finite differences.

    python examples/simulator_inside_torch.py

No AD framework can trace ``simulate`` (plain numpy, a time-stepping loop);
``DifferentiateWith(simulate, AutoFiniteDiff())`` gives torch a custom rule
whose derivatives are finite differences, so ``loss.backward()`` and a torch
optimizer work on its parameters.
"""

import numpy as np
import torch

import diffinterface as di


def simulate(params):
    """Damped oscillator x'' = -k x - c x', explicit Euler; returns the trajectory (numpy only)."""
    k, c = params
    x, v, dt = 1.0, 0.0, 0.05
    trajectory = np.empty(40)
    for i in range(40):
        x, v = x + dt * v, v + dt * (-k * x - c * v)
        trajectory[i] = x
    return trajectory


simulator = di.DifferentiateWith(simulate, di.AutoFiniteDiff())
observed = torch.tensor(simulate(np.array([4.0, 0.3])))  # data made with k = 4, c = 0.3

params = torch.tensor([2.0, 1.0], dtype=torch.float64, requires_grad=True)
optimizer = torch.optim.Adam([params], lr=0.1)
for step in range(300):
    optimizer.zero_grad()
    loss = torch.mean((simulator(params) - observed) ** 2)
    loss.backward()
    optimizer.step()

print("fitted k, c:", np.round(params.detach().numpy(), 3), "loss", float(loss.detach()))
assert np.allclose(params.detach().numpy(), [4.0, 0.3], atol=0.05)
