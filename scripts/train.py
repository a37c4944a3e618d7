"""Train ACT on one of the paper's tasks, with PyTorch (the default) or the NumPy reference.

    python scripts/train.py --task parity --bits 16 --hidden 128 --batch-size 128 --tau 1e-3 --lr 1e-3
    python scripts/train.py --backend numpy --task addition --max-digits 2 --hidden 64 --iterations 2000 --out runs/add
    python scripts/train.py --backend numpy --out runs/add --resume --iterations 4000     # continues exactly

Options, files and guarantees: ``act_experiments/training/cli.py`` or ``python scripts/train.py --help``.
"""

from act_experiments.training.cli import main

if __name__ == "__main__":
    main()
