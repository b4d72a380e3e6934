"""Record what each script in ``examples/`` prints, for the example pages of the site.

Run from the repository root after changing an example:
``python docs/record_example_outputs.py`` (or name some scripts). Each output
lands in ``docs/examples/output/<script>.txt``, which the example's page
includes below its source; timings in them are those of the recording machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "docs" / "examples" / "output"


def record(script: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise SystemExit(f"{script.name} failed:\n{done.stdout}{done.stderr}")
    (OUTPUT / f"{script.stem}.txt").write_text(done.stdout)
    print(f"recorded {script.name}")


def draw_sparsity(path: Path) -> None:
    """The picture of the sparse example's page: two patterns, each entry colored by its column's color."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    sys.path.insert(0, str(ROOT))
    import diffinterface as di

    def chain_energy(x):
        xp = di.array_namespace(x)
        r1, r2 = x[1:] - x[:-1], x[2:] - x[:-2]
        return xp.sum(r1**2 + r1**4 + xp.exp(-r1)) + xp.sum(-0.1 * r2**3)

    def diffusion(u):  # a 1-D reaction-diffusion right-hand side: tridiagonal
        xp = di.array_namespace(u)
        left = xp.concat([u[:1], u[:-1]])
        right = xp.concat([u[1:], u[-1:]])
        return left - 2 * u + right + u**2

    sparse = di.AutoSparse(di.AutoJAX())
    cases = [
        ("chain energy: Hessian", di.prepare_hessian(chain_energy, sparse, np.ones(24))),
        ("reaction-diffusion: Jacobian", di.prepare_jacobian(diffusion, sparse, np.ones(24))),
    ]
    fig, axes = plt.subplots(1, 2, figsize=(8, 4.2))
    for ax, (title, prep) in zip(axes, cases):
        pattern = di.sparsity_pattern(prep).tocoo()
        colors = np.asarray(di.coloring(prep).colors)
        ax.scatter(
            pattern.col,
            pattern.row,
            c=colors[pattern.col],
            cmap="tab10",
            vmin=0,
            vmax=9,
            s=22,
            marker="s",
        )
        ax.set_xlim(-0.5, pattern.shape[1] - 0.5)
        ax.set_ylim(pattern.shape[0] - 0.5, -0.5)
        ax.set_aspect("equal")
        ax.set_title(
            f"{title}\n{pattern.nnz} entries, {di.ncolors(prep)} colors ({di.coloring(prep).kind})",
            fontsize=9,
        )
        ax.tick_params(labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"drew {path.name}")


if __name__ == "__main__":
    OUTPUT.mkdir(parents=True, exist_ok=True)
    names = sys.argv[1:] or sorted(p.name for p in (ROOT / "examples").glob("*.py"))
    for name in names:
        record(ROOT / "examples" / name)
    draw_sparsity(OUTPUT / "sparsity.png")
