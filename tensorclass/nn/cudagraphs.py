"""``CudaGraphModule``: run a module through a captured CUDA graph.

On a CUDA device the module runs eagerly for ``warmup`` calls, then one call is captured
into a :class:`torch.cuda.CUDAGraph`; later calls copy their inputs into the captured
(static) inputs, replay the graph and return copies of the outputs. Inputs must keep the
same shapes, dtypes and keys from call to call. Without CUDA the module runs eagerly (the
same results) and a warning says so once, so code written for GPUs runs on a CPU.

>>> import warnings
>>> import torch
>>> from torch import nn
>>> from tensorclass import TensorDict
>>> from tensorclass.nn import CudaGraphModule, TensorDictModule
>>> module = TensorDictModule(nn.Linear(3, 2), in_keys=["x"], out_keys=["y"])
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     graphed = CudaGraphModule(module)
>>> graphed(TensorDict(x=torch.zeros(4, 3), batch_size=[4]))["y"].shape
torch.Size([4, 2])
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor, nn

from ..engine.core.self_types import is_op
from ..engine.core.state import TensorCore
from ..keys import NestedKey
from .keys import Key, as_keys

__all__ = ["CudaGraphModule"]


class CudaGraphModule(nn.Module):
    """Wraps ``module`` (a key-reading module or a function of tensors) to replay it as a
    CUDA graph; eager, with a one-time warning, where there is no CUDA device.

    Args:
        module: what to run: called with a tensor class or with tensors.
        warmup: eager calls before the capture (CUDA only).
        in_keys: the keys read (default: the module's ``in_keys``, if it has them).
        out_keys: the keys written (default: the module's ``out_keys``, if it has them).
        device: the CUDA device to capture on (default: the current one).
    """

    def __init__(
        self,
        module: Callable[..., object],
        warmup: int = 2,
        in_keys: Sequence[NestedKey] | None = None,
        out_keys: Sequence[NestedKey] | None = None,
        device: torch.device | str | None = None,
    ) -> None:
        super().__init__()
        if not callable(module):
            raise TypeError(f"CudaGraphModule needs a callable; got {type(module).__name__}")
        if not isinstance(warmup, int) or warmup < 1:
            raise ValueError(f"CudaGraphModule: warmup must be a positive int; got {warmup!r}")
        self.module = module
        self.warmup = warmup
        keys_in = in_keys if in_keys is not None else getattr(module, "in_keys", None)
        keys_out = out_keys if out_keys is not None else getattr(module, "out_keys", None)
        self._in_keys = None if keys_in is None else as_keys(keys_in, "in_keys")
        self._out_keys = None if keys_out is None else as_keys(keys_out, "out_keys")
        wanted = torch.device(device) if device is not None else None
        self.use_graph = torch.cuda.is_available() and (wanted is None or wanted.type == "cuda")
        self.device = wanted if wanted is not None or not self.use_graph else torch.device("cuda")
        self._calls = 0
        self._graph: Any = None
        self._static_in: Any = None
        self._static_out: Any = None
        if not self.use_graph:
            warnings.warn(
                "CudaGraphModule: no CUDA device is available (or device is not a CUDA "
                "device); the module runs eagerly, without graph capture",
                UserWarning,
                stacklevel=2,
            )

    @property
    def in_keys(self) -> list[Key]:
        """The keys read (empty when neither given nor held by the module)."""
        return list(self._in_keys or [])

    @property
    def out_keys(self) -> list[Key]:
        """The keys written (empty when neither given nor held by the module)."""
        return list(self._out_keys or [])

    def reset(self) -> None:
        """Forget the captured graph: the next calls warm up and capture again."""
        self._calls = 0
        self._graph = self._static_in = self._static_out = None

    def forward(self, *args: object, **kwargs: object) -> Any:
        """Run the module: eagerly (warm-up, or no CUDA), else by replaying the graph."""
        if not self.use_graph:
            return self.module(*args, **kwargs)
        if self._graph is None:
            self._calls += 1
            if self._calls <= self.warmup:
                return self._run_on_side_stream(args, kwargs)
            return self._capture(args, kwargs)
        return self._replay(args, kwargs)

    # -- CUDA only -------------------------------------------------------------------------

    def _run_on_side_stream(self, args: tuple[object, ...], kwargs: dict[str, object]) -> object:
        stream = torch.cuda.Stream(device=self.device)  # type: ignore[no-untyped-call]
        stream.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(stream):
            out = self.module(*args, **kwargs)
        torch.cuda.current_stream(self.device).wait_stream(stream)
        return out

    def _capture(self, args: tuple[object, ...], kwargs: dict[str, object]) -> object:
        static_in = (tuple(_clone(a) for a in args), {k: _clone(v) for k, v in kwargs.items()})
        graph = torch.cuda.CUDAGraph()
        torch.cuda.synchronize(self.device)
        with torch.cuda.graph(graph):
            static_out = self.module(*static_in[0], **static_in[1])
        self._graph, self._static_in, self._static_out = graph, static_in, static_out
        return self._replay(args, kwargs)

    def _replay(self, args: tuple[object, ...], kwargs: dict[str, object]) -> object:
        static_args, static_kwargs = self._static_in
        for static, value in zip(static_args, args):
            _copy_into(static, value)
        for name, value in kwargs.items():
            _copy_into(static_kwargs[name], value)
        self._graph.replay()
        out = _clone(self._static_out)
        first = args[0] if args else None
        if is_op(first) and isinstance(out, TensorCore):
            first.update(out)  # a key-reading module writes into its input
            return first
        return out


def _clone(value: object) -> object:
    if isinstance(value, Tensor) or is_op(value):
        return value.clone()
    if isinstance(value, tuple):
        return tuple(_clone(v) for v in value)
    return value


def _copy_into(static: object, value: Any) -> None:
    if isinstance(static, Tensor):
        static.copy_(value)
    elif is_op(static):
        static.update_(value)
