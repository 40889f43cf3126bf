#!/usr/bin/env bash
# The checks of one session on a lent GPU machine (an NVIDIA H200, no package index there), run from
# the repository root through the device tool; everything it measures lands in $OUT.
#
# Carried (ignored here, named in the call's `carry`): .whl/ (cotengra, autoray, cotengrust, stim,
# tensorcircuit-ng, tensornetwork-ng, graphviz: cp312 wheels; the machine has torch, jax, numpy,
# scipy, networkx, hypothesis, pytest-timeout) and .gpuref/ (the suite's dense references computed
# beforehand: run.py --reference-dir). tyxonq itself runs from src/. STEPS (default: all, in order)
# picks steps; BENCH_ENGINES, BENCH_WORKLOADS, JAX_TESTS and *_SECONDS narrow them.
#
#   1. the backend matrix on CUDA: every test of the `K` fixture as `pytorch-cuda` (tests/conftest.py)
#   2. torch.distributed on NCCL: torchrun with one rank per GPU, and one rank more (gloo)
#   3. the main suite's JAX cases on JAX's default device, the GPU
#   4. profile: wall time against GPU time and kernels launched per call (cuda_profile.py)
#   5. sweep: PyTorch-on-CUDA rows under several host-twin limits, each in a fresh process
#      (host_twin_sweep.py; limit 0 keeps everything on the device)
#   6. benchmark rows: tyxonq on PyTorch (CUDA) and JAX (GPU), tensorcircuit-ng's JAX (the GPU),
#      and tyxonq's NumPy on the machine's 16 cores as the same-machine baseline
#   7. bench_more: more rows for other engines, merged into the same JSON
set -u
OUT=${OUT:-/tmp/gpu_session}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
step() {  # step NAME SECONDS COMMAND...: the command's output in $OUT/NAME.log, its status at the end
    local name=$1 seconds=$2
    shift 2
    echo "== $name ($(date +%T), at most ${seconds} s)"
    timeout "$seconds" "$@" >"$OUT/$name.log" 2>&1
    echo "== $name: exit $? ($(date +%T))"
    tail -n 4 "$OUT/$name.log"
}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c "import torch, jax, numpy; print('torch', torch.__version__, torch.cuda.get_device_name(0));
print('jax', jax.__version__, jax.devices()); print('numpy', numpy.__version__)"; nproc; } 2>&1  # at most 8 files return
PYTEST="python3 -m pytest -v -p no:cacheprovider --timeout 90 -o addopts= --continue-on-collection-errors -rfE"
SELECTED="not jax_matrix and not launchers and not portability"
STEPS=${STEPS:-"cuda_matrix nccl jax_gpu profile sweep bench"}
for name in $STEPS; do
    case $name in
    cuda_matrix) step cuda_matrix "${CUDA_SECONDS:-170}" $PYTEST tests -m "$SELECTED" -k "pytorch-cuda" ;;
    nccl) step nccl 50 $PYTEST tests/test_distributed.py -k "nccl or collectives_under_each_launcher" ;;
    jax_gpu) step jax_gpu "${JAX_SECONDS:-80}" $PYTEST ${JAX_TESTS:-tests} -m "$SELECTED" \
        -k "jax and not distributed and not launcher" ;;
    profile) (cd benchmarks && step profile 50 python3 cuda_profile.py statevector:16 statevector:22 \
        energy_gradient:12 brickwork_local:50) ;;
    sweep) (cd benchmarks && step sweep "${SWEEP_SECONDS:-150}" python3 host_twin_sweep.py \
        ${SWEEP_ROWS:+--rows $SWEEP_ROWS} ${SWEEP_LIMITS:+--limits $SWEEP_LIMITS}) ;;
    bench) (cd benchmarks && step bench "${BENCH_SECONDS:-230}" python3 run.py --threads 16 --repeat 5 \
        --timeout 100 --reference-dir ../.gpuref \
        --engines ${BENCH_ENGINES:-tyxonq-pytorch-cuda tyxonq-jax-gpu tc-jax tyxonq-numpy} \
        --workloads ${BENCH_WORKLOADS:-statevector energy_gradient qaoa_energy_p2 brickwork_local batched_energies_64} \
        --output "$OUT/gpu_rows.json") ;;
    bench_more) (cd benchmarks && step bench_more "${BENCH_MORE_SECONDS:-120}" python3 run.py --threads 16 \
        --repeat 5 --timeout 100 --reference-dir ../.gpuref --merge --output "$OUT/gpu_rows.json" \
        --engines ${BENCH_MORE_ENGINES:-tyxonq-jax-gpu} --workloads ${BENCH_MORE_WORKLOADS:-qaoa_gradient_p2}) ;;
    esac
done
ls -la "$OUT"
