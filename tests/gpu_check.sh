#!/usr/bin/env bash
# The CUDA checks of the speed issue, as one script for a lent GPU machine (not part of CI):
#   bash tests/gpu_check.sh            (the golden vectors are in tests/data/golden)
# Prints `hayai bench` figures first (one crop and batches of 64, with and without --compile, exact
# fp32, the fast path's fidelity), then the CUDA-path tests, then (unless SKIP_CPU=1) the host CPU's paths.
set -u
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
PY=${PYTHON:-python3}
echo "== machine"; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
$PY -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cpu', torch.backends.cpu.get_cpu_capability())"
$PY -c "import triton; print('triton', triton.__version__)" 2>&1 | tail -1
command -v gcc cc | head -1 | sed 's/^/C compiler: /'
grep -o -m1 -E 'avx512_bf16|amx_bf16' /proc/cpuinfo | head -1 | sed 's/^/cpu has /'
bench() { echo "== hayai bench $*"; timeout 240 $PY -m app bench --random-weights --max-new-tokens 32 --json "$@" 2>&1 | grep -v Warning | tail -3; }
bench --device cuda --runs 20
bench --device cuda --runs 20 --compile
bench --device cuda --runs 10 --batch-size 64
bench --device cuda --runs 10 --batch-size 64 --compile
bench --device cuda --precision exact --runs 10
bench --device cuda --fidelity
echo "== tests"
timeout 300 $PY -m pytest -q -p no:cacheprovider tests/model/test_cuda.py tests/model/test_golden.py tests/model/test_fast.py \
    tests/model/test_generate.py 2>&1 | tail -8
echo "== batch invariance on CUDA (#25 item 1; the fidelity line above has batch_invariant too)"
timeout 300 $PY -m pytest -q -p no:cacheprovider tests/model/test_cuda.py -k batch_invariant 2>&1 | tail -4
echo "== the batch size --batch-size auto picks on CUDA (#25 item 3), real size, random weights"
timeout 240 $PY -c "
import torch; from PIL import Image; from model import calibrate, load_recognizer
rec = load_recognizer(device='cuda', random_weights=True); rec.warmup()
print(calibrate.choose_batch_size(calibrate.batch_seconds(rec, Image.new('RGB', (320, 48), 'white'))))
" 2>&1 | tail -1
[ "${SKIP_CPU:-0}" = 1 ] && exit 0
export OMP_NUM_THREADS=2
bench --device cpu --precision exact --runs 3
bench --device cpu --precision auto --runs 3
bench --device cpu --fidelity
