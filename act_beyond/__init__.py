"""Beyond the paper: ACT's descendants and the bugs of its public implementations, in PyTorch.

One module per notebook topic (notebooks 11-14): ``pitfalls`` (correct ACT pieces beside their
common wrong versions), ``pondernet`` (PonderNet's halting and loss), ``universal_transformer``
(a Universal Transformer encoder with per-position ACT) and ``convnet_aig`` (ConvNet-AIG's gated
residual blocks). Each reuses act_torch and act_experiments where they fit.
"""
