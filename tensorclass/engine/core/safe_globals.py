"""What ``torch.load(f)`` (``weights_only=True``, torch's default) may rebuild.

torch's restricted unpickler builds only the globals on its allow-list. Every tensor class
(``TensorDict``, lazy stacks, each typed class as it is defined) and the functions their
pickles call are put on it, so ``torch.save(x, f); torch.load(f)`` works without the user
listing private names — and nothing else becomes loadable: the only code a checkpoint can
reach is tensorclass's own rebuild functions, which build instances from tensors and
plain values without running ``__init__``. The module defining a typed class must be
imported before loading (the unpickler never imports anything).
"""

from __future__ import annotations

from typing import Any

import torch

from ...non_tensor import NonTensorData, NonTensorStack

__all__ = ["allow_loading"]


def allow_loading(*objects: Any) -> None:
    """Put ``objects`` (classes, or the functions their pickles call) on torch's allow-list."""
    add = getattr(torch.serialization, "add_safe_globals", None)
    if add is not None:  # torch < 2.4 has no allow-list (and loads with weights_only=False)
        add(list(objects))


allow_loading(NonTensorData, NonTensorStack)
