#!/usr/bin/env bash
# The fused ponder-loop kernels (act_engine.kernel_act, act_engine.triton_rnn, act_engine.triton_lstm)
# on an NVIDIA GPU, in one call of under ten minutes, on a machine with a CUDA build of PyTorch and
# Triton installed (requirements-kernels.txt):
#
#     OUT=runs/gpu_kernels bash scripts/gpu_kernels.sh
#
# 1. versions; 2. every kernel compiled for this GPU, without running it, with its registers, spills
# and shared memory (scripts/kernels_compile.py); 3. the kernel tests on CUDA, compiled kernels
# against the engine and act_numpy, float64 and float32, and a tiny `scripts/sweep.py --kernels`
# end to end against the same sweep on CUDA graphs (tests/test_kernels.py, skips made failures);
# 4. bench_population.py at parity's size (tanh RNN) for K = 16, 64 and 256 and at logic's (LSTM
# 128, batch 16) for K = 16 and 64, the population with CUDA graphs and on the kernels side by
# side. (Addition and sort have 512 units, more than the kernels' 128.) Each stage
# has a time limit; everything lands in $OUT: one log per stage and stages.txt (exit status and
# seconds of each).
set -u
OUT=${OUT:-runs/gpu_kernels}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" ACT_KERNELS_REQUIRED=1
PY=${PYTHON:-python3}
start=$(date +%s)

# stage NAME SECONDS COMMAND...: see gpu_stage.sh
source "$(dirname "$0")/gpu_stage.sh"

{
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
    $PY -c "import sys, torch, numpy, triton; print(sys.version.split()[0], 'torch', torch.__version__, \
'cuda', torch.version.cuda, 'numpy', numpy.__version__, 'triton', triton.__version__, torch.cuda.get_device_name(0))"
} >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

stage compile 90 $PY scripts/kernels_compile.py
stage tests 180 $PY -m pytest -q -p no:cacheprovider -rs tests/test_kernels.py
stage bench 100 $PY benchmarks/bench_population.py --device cuda --kernels --sizes parity --K 16,64 --seconds 1
stage bench256 90 $PY benchmarks/bench_population.py --device cuda --kernels --sizes parity --K 256 --seconds 1
stage bench_logic 100 $PY benchmarks/bench_population.py --device cuda --kernels --sizes logic --K 16,64 --seconds 1
tail -n 20 "$OUT"/compile.log
tail -n 12 "$OUT"/tests.log "$OUT"/bench.log "$OUT"/bench256.log "$OUT"/bench_logic.log
echo "total seconds=$(($(date +%s) - start))" | tee -a "$OUT/stages.txt"
