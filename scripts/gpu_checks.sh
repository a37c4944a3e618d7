#!/usr/bin/env bash
# Every check of docs/benchmarks_population.md ("On a GPU") in one go, on a machine with an NVIDIA
# GPU and a CUDA build of PyTorch:
#
#     OUT=runs/gpu GPU_SECONDS=570 bash scripts/gpu_checks.sh
#
# 1. the CUDA tests; 2. bench_population.py at parity's size; 3. the 16-bit parity sweep (its time
# is the goal: under 5 minutes); 4. the paper's parity experiment (64 bits), one full sweep per
# learning rate in LRS, side by side on the GPU, trained until GPU_SECONDS are spent. Each stage has
# a time limit; a sweep stopped by it keeps its checkpoints and resumes when the same command is run
# again. Everything lands in $OUT: one log per stage, stages.txt (exit status and seconds of each),
# GPU readings, and runs.tar.gz with the sweeps' results and run logs (checkpoints left out).
set -u
OUT=${OUT:-runs/gpu}
LRS=${LRS:-3e-4,1e-3,3e-3}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
PY=${PYTHON:-python3}
start=$(date +%s)
deadline=$((start + ${GPU_SECONDS:-570}))

# stage NAME SECONDS COMMAND...: see gpu_stage.sh
source "$(dirname "$0")/gpu_stage.sh"

{
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
    $PY -c "import sys, torch, numpy; print(sys.version.split()[0], 'torch', torch.__version__, \
'cuda', torch.version.cuda, 'numpy', numpy.__version__, torch.cuda.get_device_name(0))"
    nproc
} >"$OUT/env.txt" 2>&1
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv -l 15 >"$OUT/gpu.csv" 2>&1 &
smi=$!

stage tests 150 $PY -m pytest -q -p no:cacheprovider -rs tests/test_torch_act.py tests/test_torch_graphed.py \
    tests/test_population_graphed.py tests/test_engine_torch.py tests/test_faults.py::test_cli_refuses_a_cuda_device_beyond_the_count
stage bench 150 $PY benchmarks/bench_population.py --device cuda --sizes parity --K 1,16,64 --seconds 2
stage sweep16 330 $PY scripts/sweep.py --name parity16_gpu --task parity --bits 16 --hidden 128 \
    --batch-size 128 --lr 3e-3 --iterations 20000 --eval-every 1000 \
    --taus 1e-4,3e-4,1e-3,3e-3,1e-2,3e-2,1e-1,3e-1 --seeds 4 --workers 1

# the paper's parity: 64 bits, tanh RNN 128, batch 128, eps 0.01, M 100 (the defaults), one sweep per lr
left=$((deadline - $(date +%s) - 60))
if [ "$left" -gt 30 ]; then
    pids=()
    for lr in ${LRS//,/ }; do
        timeout -s TERM -k 45 "$left" $PY scripts/sweep.py --name "parity_paper_lr$lr" --task parity \
            --lr "$lr" --iterations 200000 --eval-every 5000 \
            --taus 1e-4,3e-4,1e-3,2e-3,3e-3,1e-2,3e-2,1e-1 --seeds 4 --workers 1 \
            >"$OUT/paper_lr$lr.log" 2>&1 &
        pids+=($!)
    done
    t0=$(date +%s)
    for pid in "${pids[@]}"; do wait "$pid"; echo "paper pid=$pid rc=$?" >>"$OUT/stages.txt"; done
    echo "paper seconds=$(($(date +%s) - t0)) limit=$left" | tee -a "$OUT/stages.txt"
fi
kill "$smi" 2>/dev/null
cat "$OUT"/paper_lr*.log >"$OUT/paper.log" 2>/dev/null
rm -f "$OUT"/paper_lr*.log
shopt -s nullglob
kept=(results/parity16_gpu results/parity_paper_lr* runs/sweeps/parity16_gpu runs/sweeps/parity_paper_lr*)
kept=($(for p in "${kept[@]}"; do [ -e "$p" ] && echo "$p"; done))
[ ${#kept[@]} -gt 0 ] && tar czf "$OUT/runs.tar.gz" --exclude='checkpoint*' "${kept[@]}" 2>>"$OUT/stages.txt"
echo "total seconds=$(($(date +%s) - start))" | tee -a "$OUT/stages.txt"
