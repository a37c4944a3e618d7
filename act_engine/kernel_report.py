"""What each Triton kernel of the ponder loop uses on a CUDA GPU, compiled but not run
(scripts/kernels_compile.py): registers, spilled bytes (the stack frame) and shared memory, at
each block shape act_engine.kernel_act may launch (BLOCK_B 16, BLOCK_H 16 .. 128) in float32,
with the warps it launches that shape with (kernel_act.num_warps).

The register and stack figures are read from the compiled binary with the cuobjdump Triton
ships. Triton is optional (requirements-kernels.txt): it is imported inside the functions, so
importing this module needs none.
"""

import inspect
import subprocess
import tempfile

INTS = ("B", "T", "H", "L")
INT_POINTERS = ("cap", "N")


def signature(kernel, dtype="fp32"):
    """The kernel's argument types: pointers to dtype (int32 for cap and N), int32 sizes, constexprs."""
    names = inspect.signature(kernel.fn).parameters
    return {n: "constexpr" if n.startswith("BLOCK_") else "i32" if n in INTS
            else "*i32" if n in INT_POINTERS else f"*{dtype}" for n in names}


def resources(cubin):
    """The REG/STACK/SHARED line of cuobjdump -res-usage for a compiled kernel."""
    from triton.backends.nvidia.compiler import get_ptxas
    tool = get_ptxas(90).path.replace("ptxas", "cuobjdump")
    with tempfile.NamedTemporaryFile("wb", suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.run([tool, "-res-usage", f.name], capture_output=True, text=True).stdout
    return " ".join(w for line in out.splitlines() if "REG:" in line for w in line.split()[:3])


def main(argv=None):
    """Compile every kernel at every block shape and print one line each; 1 when one fails, else 0.

    Compiles for the GPU present, for sm_90 where there is none. ``argv`` is accepted for the
    scripts' common shape and not read: the report has no options.
    """
    import torch
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from act_engine import kernel_act, triton_lstm, triton_rnn

    if torch.cuda.is_available():
        target = triton.runtime.driver.active.get_current_target()
    else:
        target = GPUTarget("cuda", 90, 32)
    print(f"triton {triton.__version__}, target {target}")
    failed = 0
    kernels = (triton_rnn.rnn_ponder_forward, triton_rnn.rnn_ponder_backward,
               triton_lstm.lstm_ponder_forward, triton_lstm.lstm_ponder_backward)
    for kernel in kernels:
        for block_h in (16, 32, 64, 128):
            consts = {"BLOCK_B": kernel_act.BLOCK_B, "BLOCK_H": block_h}
            warps = kernel_act.num_warps(block_h)          # what kernel_act launches this tile with
            shape = f"{kernel.fn.__name__} {consts} num_warps {warps}"
            try:
                compiled = triton.compile(ASTSource(kernel, signature(kernel), constexprs=consts), target=target,
                                          options={"num_warps": warps})
                print(f"{shape}: {resources(compiled.asm['cubin'])}", flush=True)
            except Exception as e:       # report every kernel, then fail
                failed += 1
                print(f"{shape}: FAILED {type(e).__name__}: {e}", flush=True)
    return 1 if failed else 0
