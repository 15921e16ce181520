"""Side-by-side benchmarks: tensorclass, tensordict (the peer) and plain PyTorch.

Run ``python -m benchmarks`` (``--help`` for the options). See ``docs/benchmarks.md``.
"""
