#!/usr/bin/env bash
# The GPU check (issue #31): every operator with torch CUDA tensors and JAX GPU arrays through the
# conformance kit (results must come back on x's device), then the prepared-call timings.
# On a lent GPU machine, from the repository root, with the wheels of what its image lacks in .whl/:
#   bash tools/gpu_check/run.sh  (writes $OUT/kit.txt and $OUT/timings.jsonl when OUT is set)
set -u
OUT=${OUT:-/tmp/gpu_check}; mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import sys, numpy, jax, torch; print(sys.version.split()[0], 'numpy', numpy.__version__, 'jax', jax.__version__, jax.devices(), 'torch', torch.__version__, torch.cuda.get_device_name())"
BACKENDS=jax,jax-forward,torch,torch-forward,finitediff-central,tools.gpu_check.backends:WRAPPED
timeout "${KIT_TIMEOUT:-300}" python3 -m pytest -p diffinterface.testing.pytest_plugin -p no:cacheprovider \
  --pyargs diffinterface.testing.test_kit_conformance -k "first_order or second_order or empty_arrays" \
  --di-backends="$BACKENDS" --di-devices=torch=cuda,jax=gpu -n "${WORKERS:-12}" -v --tb=short -rf > "$OUT/kit.txt" 2>&1; grep -E "passed|failed" "$OUT/kit.txt" | tail -3
timeout "${TIMINGS_TIMEOUT:-200}" python3 -m tools.gpu_check.timings 2>&1 | tee "$OUT/timings.jsonl"
