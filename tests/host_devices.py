"""Running a check script in a fresh Python process with JAX's simulated host devices.

``XLA_FLAGS=--xla_force_host_platform_device_count=N`` must be set before JAX
starts, so the device tests run their checks in a subprocess that prints one
JSON object as its last line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import diffinterface as di


def run_on_host_devices(script, count):
    """The JSON object ``script`` prints last, run with ``count`` simulated JAX host devices."""
    env = {
        **os.environ,
        "XLA_FLAGS": f"--xla_force_host_platform_device_count={count}",
        "JAX_PLATFORMS": "cpu",
    }
    root = os.path.dirname(os.path.dirname(os.path.abspath(di.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
