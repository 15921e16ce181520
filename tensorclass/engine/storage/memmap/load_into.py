"""``load_memmap(..., out=)``: put a loaded tree into an existing instance.

As in ``tensordict``: the nested levels of ``out`` are reused (same objects), its leaves are
replaced by the loaded ones (their storage is not reused: to write into it, use
``out.update_(loaded)``), and its keys that the save does not hold are removed. The batch
size (and the batch dim names) come from the save; ``out`` keeps its lock state.
"""

from __future__ import annotations

from ....errors import StructureMismatchError
from ...core.lazy_stacks import is_lazy_stack
from ...core.state import TensorCore

__all__ = ["load_into"]


def load_into(out: object, loaded: TensorCore, where: tuple[str, ...] = ()) -> TensorCore:
    """Give ``out`` the structure and leaves of ``loaded``; returns ``out``."""
    if not isinstance(out, TensorCore):
        raise TypeError(
            f"load_memmap: out must be a tensor class instance; got {type(out).__name__}"
        )
    if is_lazy_stack(out) or is_lazy_stack(loaded):
        if not (
            is_lazy_stack(out)
            and is_lazy_stack(loaded)
            and len(out.members) == len(loaded.members)
            and out.stack_dim == loaded.stack_dim
        ):
            raise StructureMismatchError(
                f"load_memmap: out{_at(where)} and the save must both be lazy stacks of the "
                f"same length and stack dim"
            )
        for index, (mine, theirs) in enumerate(zip(out.members, loaded.members)):
            load_into(mine, theirs, (*where, f"<member {index}>"))
        return out
    data: dict[str, object] = {}
    for key, leaf in loaded._data.items():
        current = out._data.get(key)
        if isinstance(leaf, TensorCore) and isinstance(current, TensorCore):
            data[key] = load_into(current, leaf, (*where, key))
        else:
            data[key] = leaf
    out._data.clear()
    out._data.update(data)
    out._batch_size = loaded._batch_size
    out._names = loaded._names
    if loaded._device is not None or out._device is not None:
        out._device = loaded._device
    return out


def _at(where: tuple[str, ...]) -> str:
    return f" at {where!r}" if where else ""
