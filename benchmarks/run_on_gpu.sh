#!/usr/bin/env bash
# Issue 18 part B in one go on a lent GPU machine (benchmarks/RESULTS.md, "GPU"): the environment, the sync-debug
# tests, the GPU benchmarks, then the test suite (the CUDA branches of the device-parametrised tests included).
# Logs go to $OUT (or ./out). Wheels the machine lacks (pysodmetrics, pyEdgeEval built for its Python) may lie in
# .whl/; the reference data in ./shared (copied beside the repository, where the tests look for it).
#   BENCHES="gpu boundary partition proposals" (default), SUITE_TIMEOUT=300, extra pytest arguments as "$@".
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-out}; mkdir -p "$OUT"
if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
fi
export PYTHONPATH=/tmp/site:$PWD
[ -d shared ] && [ ! -e ../shared ] && cp -r shared ../shared
{ nvidia-smi -L; python3 -c "import torch, numba, numpy, torchmetrics as tm; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'numba', numba.__version__, 'numpy', numpy.__version__, 'torchmetrics', tm.__version__, torch.cuda.get_device_name())"; } 2>&1 | tee "$OUT/env.txt"
# 1. CUDA's sync detector around the foreground updates and the losses
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_sync_free.py -rfs > "$OUT/sync.txt" 2>&1
tail -1 "$OUT/sync.txt"; grep -E "^(E  |FAILED)" "$OUT/sync.txt" | sort | uniq -c | head -20
# 2. benchmarks, GPU beside CPU, nothing else running
for b in ${BENCHES:-gpu boundary partition proposals}; do
    case $b in
        gpu) args=(--quick) ;; boundary) args=(--device cuda --skip-peer --repeats 3) ;;
        partition) args=(--device cuda --repeat 2) ;; proposals) args=(--device cuda --peer-proposals 100) ;;
    esac
    timeout 170 python3 "benchmarks/bench_$b.py" "${args[@]}" > "$OUT/bench_$b.txt" 2>&1; echo "bench_$b rc=$?"
    tail -3 "$OUT/bench_$b.txt" | grep -i error
done
# 3. the suite, one line per test (the release test builds in an isolated env that needs the network: not here)
SEGMETRICS_REQUIRE_SHARED=1 timeout "${SUITE_TIMEOUT:-300}" python3 -m pytest -p no:cacheprovider -n 15 -v -rfE \
    --deselect tests/test_packaging.py "$@" > "$OUT/tests.txt" 2>&1; echo "suite rc=$?"
grep -E " (FAILED|ERROR) " "$OUT/tests.txt" | sed 's/^\[gw[0-9]*\] \[ *[0-9]*%\] //' | sort | head -60
tail -2 "$OUT/tests.txt"
