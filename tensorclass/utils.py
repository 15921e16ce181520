"""Helpers at the path of ``tensordict.utils``: keys, shape helpers, predicates, the behaviour
switches, comparisons, and a few tools of their own (:func:`isin`, :func:`remove_duplicates`,
:class:`timeit`, :func:`print_directory_tree`, :class:`TensorDictFuture`).

``from tensordict.utils import expand_as_right, NestedKey`` ports as
``from tensorclass.utils import expand_as_right, NestedKey``. ``LinkedList`` is left out
(``docs/migrating.md`` says why).

>>> import torch
>>> from tensorclass.utils import expand_as_right, unravel_key
>>> expand_as_right(torch.ones(3), torch.zeros(3, 4)).shape
torch.Size([3, 4])
>>> unravel_key(("a", ("b", "c")))
('a', 'b', 'c')
"""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, ClassVar, Literal, TypeVar, cast, overload

import torch
from torch import Tensor
from torch.nn import Buffer

from .collection import is_tensor_collection
from .engine.base import TensorDictBase
from .engine.build.parse_repr import parse_tensor_dict_string
from .engine.keys.predicates import is_bool, is_floating, is_inexact, is_integer
from .engine.leafwise.comparing import assert_allclose_td, assert_close
from .engine.shape.expand_right import expand_as_right, expand_right
from .engine.storage.memmap.future import TensorDictFuture
from .keys import KEY_SEPARATOR, NestedKey, unravel_key, unravel_key_list, unravel_key_to_tuple
from .non_tensor import is_non_tensor
from .switches import (
    capture_non_tensor_stack,
    get_printoptions,
    lazy_legacy,
    list_to_stack,
    set_capture_non_tensor_stack,
    set_lazy_legacy,
    set_list_to_stack,
    set_printoptions,
)
from .typed import is_tensorclass

__all__ = [
    "KEY_SEPARATOR",
    "Buffer",
    "DeviceType",
    "IndexType",
    "NestedKey",
    "TensorDictFuture",
    "assert_allclose_td",
    "assert_close",
    "capture_non_tensor_stack",
    "expand_as_right",
    "expand_right",
    "get_printoptions",
    "is_bool",
    "is_floating",
    "is_inexact",
    "is_integer",
    "is_non_tensor",
    "is_tensor_collection",
    "is_tensorclass",
    "isin",
    "lazy_legacy",
    "list_to_stack",
    "logger",
    "parse_tensor_dict_string",
    "print_directory_tree",
    "remove_duplicates",
    "set_capture_non_tensor_stack",
    "set_lazy_legacy",
    "set_list_to_stack",
    "set_printoptions",
    "timeit",
    "unravel_key",
    "unravel_key_list",
    "unravel_key_to_tuple",
]

DeviceType = torch.device | str | int
"""What names a device: a ``torch.device``, its name (``"cpu"``) or an accelerator's index."""
IndexType = None | int | slice | str | Tensor | list[Any] | tuple[Any, ...]
"""What indexes an instance: a key, an int, a slice, a tensor, a list or a tuple of these."""

logger = logging.getLogger("tensorclass")
"""The library's logger (``timeit.print`` and ``print_directory_tree`` write to it)."""

B = TypeVar("B", bound=TensorDictBase)
F = TypeVar("F", bound=Callable[..., Any])


def _batch_dim(data: TensorDictBase, dim: int, subject: str = "a TensorDict") -> int:
    """``dim`` normalised against the batch dims (a ``ValueError`` naming both if out of range,
    in tensordict's words)."""
    if not -data.ndim <= dim < data.ndim:
        raise ValueError(
            f"The specified dimension '{dim}' is invalid for {subject} with batch size "
            f"{list(data.batch_size)}: it is not one of its {data.ndim} batch dims"
        )
    return dim % data.ndim


def _tensor_at(data: TensorDictBase, key: NestedKey, which: str) -> Tensor:
    value = data.get(key, None)
    if not isinstance(value, Tensor):
        raise KeyError(f"Key '{key}' not found in {which} or not a tensor.")
    return value


def isin(input: TensorDictBase, reference: TensorDictBase, key: NestedKey, dim: int = 0) -> Tensor:
    """Which elements of ``input`` along ``dim`` are also in ``reference``: a bool tensor of
    ``input``'s size along ``dim``.

    The tensors under ``key`` are compared slice by slice along ``dim`` (an element is in
    ``reference`` when its whole slice equals one of ``reference[key]``'s). Both instances
    must have as many batch dims; a missing key or a nested level under it is a
    ``KeyError``, a dim out of range a ``ValueError``.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> from tensorclass.utils import isin
    >>> data = TensorDict(a=torch.tensor([[1, 2], [3, 4], [5, 6]]), batch_size=[3])
    >>> isin(data, TensorDict(a=torch.tensor([[3, 4]]), batch_size=[1]), "a")
    tensor([False,  True, False])
    """
    target = _tensor_at(input, key, "input")
    ref = _tensor_at(reference, key, "reference")
    if input.ndim != reference.ndim:
        raise ValueError(
            f"The number of dimensions in the batch size of the input and reference must "
            f"be the same (isin); got batch sizes {list(input.batch_size)} and "
            f"{list(reference.batch_size)}"
        )
    dim = _batch_dim(input, dim, "an input TensorDict")
    # number the distinct slices of both, then look up input's numbers among reference's
    _, ids = torch.unique(torch.cat([ref, target], dim), dim=dim, return_inverse=True)
    count = ref.shape[dim]
    return torch.isin(ids[count:], ids[:count])


@overload
def remove_duplicates(
    input: B, key: NestedKey, dim: int = 0, *, return_indices: Literal[False] = False
) -> B: ...
@overload
def remove_duplicates(
    input: B, key: NestedKey, dim: int = 0, *, return_indices: Literal[True]
) -> tuple[B, Tensor]: ...
def remove_duplicates(
    input: B, key: NestedKey, dim: int = 0, *, return_indices: bool = False
) -> B | tuple[B, Tensor]:
    """``input`` without the elements along ``dim`` whose slice of ``key`` repeats an earlier
    one: the first of each group of equal slices is kept, in the order of the values of
    ``key`` (sorted), with the same elements of every other entry.

    ``return_indices=True`` also returns, for each element of ``input``, the position of its
    value in the result. A missing key or a nested level under it is a ``KeyError``, a dim
    out of range a ``ValueError``.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> from tensorclass.utils import remove_duplicates
    >>> data = TensorDict(a=torch.tensor([3, 1, 3, 2]), b=torch.arange(4), batch_size=[4])
    >>> kept = remove_duplicates(data, "a")
    >>> kept["a"].tolist(), kept["b"].tolist()
    ([1, 2, 3], [1, 3, 0])
    """
    tensor = input.get(key, None)
    if not isinstance(tensor, Tensor):
        what = "does not exist in" if tensor is None else "does not point to a tensor in"
        raise KeyError(f"The key '{key}' {what} the TensorDict.")
    dim = _batch_dim(input, dim)
    _, ids, counts = torch.unique(tensor, dim=dim, return_inverse=True, return_counts=True)
    # a stable sort groups each value's positions in order: the first of a group is kept
    order = torch.sort(ids, stable=True).indices
    starts = torch.cumsum(counts, 0) - counts
    output = input[(slice(None),) * dim + (order[starts],)]
    return (output, ids) if return_indices else output


class timeit:
    """Time a function (as a decorator) or a block (as a context manager) under a name.

    Each name accumulates its number of calls, total time and mean time, process-wide;
    :meth:`print` logs them (with :data:`logger`, at ``INFO``) and :meth:`erase` resets them.

    >>> from tensorclass.utils import timeit
    >>> @timeit("step")
    ... def step() -> int:
    ...     return 1
    >>> with timeit("block"):
    ...     _ = step()
    >>> timeit._REG["step"][2], timeit._REG["block"][2]
    (1, 1)
    >>> timeit.erase()
    """

    #: name -> [mean seconds, total seconds, calls]
    _REG: ClassVar[dict[str, list[float]]] = {}

    def __init__(self, name: str) -> None:
        self.name = name
        self._starts: list[float] = []

    def __call__(self, fn: F) -> F:
        """``fn``, timed under this name at each call."""

        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            with timeit(self.name):
                return fn(*args, **kwargs)

        return cast(F, timed)

    def __enter__(self) -> None:
        self._starts.append(time.perf_counter())

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        elapsed = time.perf_counter() - self._starts.pop()
        record = self._REG.setdefault(self.name, [0.0, 0.0, 0])
        record[1] += elapsed
        record[2] += 1
        record[0] = record[1] / record[2]

    @staticmethod
    def print(prefix: str | None = None) -> None:
        """Log each name's mean and total time (names in order), after ``prefix`` if given."""
        for name in sorted(timeit._REG):
            mean, total, _ = timeit._REG[name]
            line = f"{name} took {mean * 1000:.4g} msec (total = {total:.4g} sec)"
            logger.info(f"{prefix} -- {line}" if prefix else line)

    @staticmethod
    def erase() -> None:
        """Reset every name's count and times to zero."""
        for name in timeit._REG:
            timeit._REG[name] = [0.0, 0.0, 0]


def _size_text(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} TB"


def print_directory_tree(
    path: str | os.PathLike[str], indent: str = "", display_metadata: bool = True
) -> str:
    """The tree of files and folders under ``path``, logged line by line (with
    :data:`logger`, at ``INFO``) and returned as one string.

    A folder's line ends with ``/`` and its entries follow, sorted by name, four spaces
    further in (after ``indent``). ``display_metadata`` puts the total size of the files
    first (``Directory size: 12.00 B``).

    >>> import os, tempfile
    >>> from tensorclass.utils import print_directory_tree
    >>> root = tempfile.mkdtemp()
    >>> os.mkdir(os.path.join(root, "sub"))
    >>> with open(os.path.join(root, "sub", "x.bin"), "wb") as file:
    ...     _ = file.write(b"12345")
    >>> print(print_directory_tree(root).replace(os.path.basename(root), "root"))
    Directory size: 5.00 B
    root/
        sub/
            x.bin
    """
    path = os.fspath(path)
    lines: list[str] = []
    if display_metadata:
        total = sum(
            os.path.getsize(os.path.join(folder, name))
            for folder, _, names in os.walk(path)
            for name in names
        )
        lines.append(f"Directory size: {_size_text(total)}")
        logger.info(lines[-1])
    name = os.path.basename(path.rstrip(os.sep)) or path
    if os.path.isdir(path):
        lines.append(f"{indent}{name}/")
        logger.info(lines[-1])
        for entry in sorted(os.listdir(path)):
            inner = os.path.join(path, entry)
            lines.append(print_directory_tree(inner, indent + "    ", display_metadata=False))
    else:
        lines.append(f"{indent}{name}")
        logger.info(lines[-1])
    return "\n".join(lines)


T = TypeVar("T")
