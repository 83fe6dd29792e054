#!/usr/bin/env bash
# The prepared GPU check (issue "The GPU path earns its name", item 4): one call on a lent device, from a bare
# machine, within 8 minutes. Writes one results file, $OUT/gpu_check.txt (and the raw logs beside it):
#   1. the environment (device, torch / CUDA / numba versions, commit);
#   2. the CUDA tests: torch.cuda.set_sync_debug_mode("error") around the foreground updates and the losses, and
#      CPU == GPU parity of every family (tests/test_sync_free.py, tests/test_device_parity.py);
#   3. benchmarks/bench_gpu.py --quick: ForegroundMeasures and each measure at 320x320 (batch 256) and 1024x1024
#      (batch 16) beside the same machine's CPU, the losses beside BCE, and which targets are met.
# Usage on the device (the repository root is the working directory):
#   bash benchmarks/run_on_gpu.sh            # SUITE=1 also runs the whole test suite afterwards (not in 8 minutes)
# The image has torch, numba, scipy, torchmetrics, pillow, pyyaml, tqdm, pytest and hypothesis; wheels it lacks may
# lie in .whl/ (installed with --no-deps); the reference data in ./shared is copied to ../shared when present.
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-out}; mkdir -p "$OUT"
RESULT="$OUT/gpu_check.txt"
if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
fi
export PYTHONPATH=/tmp/site:$PWD
export NUMBA_CACHE_DIR=${NUMBA_CACHE_DIR:-/tmp/numba-cache}
[ -d shared ] && [ ! -e ../shared ] && cp -r shared ../shared
start=$(date +%s)
{
    echo "# GPU check, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    nvidia-smi -L
    python3 -c "import torch, numba, numpy, torchmetrics as tm; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'numba', numba.__version__, 'numpy', numpy.__version__, 'torchmetrics', tm.__version__, '|', torch.cuda.get_device_name())"
} > "$RESULT" 2>&1
# 2. the CUDA tests (numba compiles its CPU kernels on the first CPU run: part of this step's time)
timeout 240 python3 -m pytest -q -p no:cacheprovider -rfs tests/test_sync_free.py tests/test_device_parity.py tests/ops/test_edt_triton.py \
    > "$OUT/cuda_tests.txt" 2>&1
echo "cuda tests rc=$?" >> "$RESULT"
{ tail -1 "$OUT/cuda_tests.txt"; grep -E "^(FAILED|ERROR)" "$OUT/cuda_tests.txt" | head -20; } >> "$RESULT"
# 3. the foreground and loss tables, GPU beside the same machine's CPU
timeout 270 python3 benchmarks/bench_gpu.py --quick > "$OUT/bench_gpu.txt" 2>&1
echo "bench_gpu rc=$?" >> "$RESULT"
cat "$OUT/bench_gpu.txt" >> "$RESULT"
# 4. the device distance transform (O(N log n), issue 44) and the losses, beside the host / BCE
timeout 120 python3 benchmarks/bench_device_edt.py --device cuda --sizes 64 128 256 --repeat 5 > "$OUT/bench_edt.txt" 2>&1
echo "bench_device_edt rc=$?" >> "$RESULT"
cat "$OUT/bench_edt.txt" >> "$RESULT"
timeout 120 python3 benchmarks/bench_losses.py --device cuda > "$OUT/bench_losses.txt" 2>&1
echo "bench_losses rc=$?" >> "$RESULT"
cat "$OUT/bench_losses.txt" >> "$RESULT"
echo "elapsed $(( $(date +%s) - start )) s" >> "$RESULT"
if [ "${SUITE:-0}" = 1 ]; then
    SEGMETRICS_REQUIRE_SHARED=1 timeout "${SUITE_TIMEOUT:-300}" python3 -m pytest -p no:cacheprovider -n 15 -q -rfE \
        --deselect tests/test_packaging.py > "$OUT/tests.txt" 2>&1; echo "suite rc=$?" >> "$RESULT"
    tail -2 "$OUT/tests.txt" >> "$RESULT"
fi
cat "$RESULT"
