#!/usr/bin/env bash
# The CUDA checks of the speed issue, as one script for a lent GPU machine (not part of CI):
#   bash tests/gpu_check.sh            (HAYAI_GOLDEN_DIR may point at shared/golden)
# Prints the CUDA-path tests, then `hayai bench` figures: one crop, batches of 64, exact fp32,
# the fast path's fidelity, and the host CPU's own paths (bf16 where the CPU has it).
set -u
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
PY=${PYTHON:-python3}
echo "== machine"; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
$PY -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cpu', torch.backends.cpu.get_cpu_capability())"
grep -o -m1 -E 'avx512_bf16|amx_bf16' /proc/cpuinfo | head -1 | sed 's/^/cpu has /'
echo "== tests"
$PY -m pytest -q -p no:cacheprovider tests/model/test_cuda.py tests/model/test_golden.py tests/model/test_fast.py \
    tests/model/test_generate.py 2>&1 | tail -8
bench() { echo "== hayai bench $*"; $PY -m app bench --random-weights --max-new-tokens 32 --json "$@"; }
bench --device cuda --runs 20
bench --device cuda --runs 10 --batch-size 64
bench --device cuda --runs 10 --batch-size 64 --max-new-tokens 32 --precision exact
bench --device cuda --precision exact --runs 10
bench --device cuda --fidelity
bench --device cuda --variant nova --runs 10
[ "${SKIP_CPU:-0}" = 1 ] && exit 0
export OMP_NUM_THREADS=2
bench --device cpu --precision exact --runs 3
bench --device cpu --precision auto --runs 3
bench --device cpu --fidelity
