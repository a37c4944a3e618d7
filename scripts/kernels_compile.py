"""Compile every Triton kernel of the ponder loop (act_engine.triton_rnn, act_engine.triton_lstm)
for a CUDA GPU, without running it, and report what each uses: registers, spilled bytes (the stack
frame) and shared memory, at each block shape act_engine.kernel_act may launch (BLOCK_B 16,
BLOCK_H 16 .. 128) in float32, with the warps it launches that shape with.

    python scripts/kernels_compile.py            # for the GPU present; sm_90 where there is none

Exit status 1 when a kernel fails to compile. The register and stack figures are read from the
compiled binary with the cuobjdump Triton ships.
"""

import sys

from act_engine.kernel_report import main

if __name__ == "__main__":
    sys.exit(main())
