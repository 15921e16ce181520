"""``TypedTensorDict``: declared fields, and any other key as in a ``TensorDict``.

It is a typed class built by the same engine: ``class TypedTensorDict(TensorClass,
extra_keys=True, kw_only=True)``. The schema's fields are checked and read as attributes;
keys that are not fields are stored by their value, as a ``TensorDict`` stores them.
"""

from __future__ import annotations

from .compiler import option_base
from .typed import TensorClass

__all__ = ["TypedTensorDict"]

#: the options of ``TypedTensorDict[...]``
_OPTIONS = ("frozen", "shadow")
#: the base class made for each set of options, made once
_BASES: dict[frozenset[str], type[TypedTensorDict]] = {}


class TypedTensorDict(TensorClass, extra_keys=True, kw_only=True):
    """A typed class whose instances also take keys that are not fields.

    A subclass declares fields as annotations (inherited, with defaults, as any tensor
    class); it gets attribute access to them, their checks and conversions, every engine
    operation, and, as a ``TensorDict``:

    - a constructor that takes the entries as an optional mapping (or tensor class) first,
      then the fields by keyword only: ``State({"eta": ...}, X=..., batch_size=[5])``;
      ``lock=True`` locks the result (``non_blocking=`` is accepted; moves are synchronous);
    - keys besides the fields: ``state["extra"] = value`` (they are read by key, not as
      attributes, and go where the fields go: indexing, stacking, saving...);
    - ``from_tensordict(td)``: typed access to an existing ``TensorDict`` or lazy stack,
      sharing its tensors.

    ``class State(TypedTensorDict, frozen=True)`` locks every instance.

    >>> import torch
    >>> from torch import Tensor
    >>> from tensorclass import TensorDict, TypedTensorDict
    >>> class PredictorState(TypedTensorDict):
    ...     eta: Tensor
    ...     X: Tensor
    >>> state = PredictorState(eta=torch.zeros(5, 3), X=torch.zeros(5, 4), batch_size=[5])
    >>> state["step"] = torch.arange(5)  # a key that is not a field
    >>> state[0].batch_size, sorted(state.keys())
    (torch.Size([]), ['X', 'eta', 'step'])
    >>> td = TensorDict(eta=torch.zeros(5, 3), X=torch.zeros(5, 4), batch_size=[5])
    >>> PredictorState.from_tensordict(td).eta is td["eta"]
    True
    """

    def __class_getitem__(cls, options: str | tuple[str, ...]) -> type[TypedTensorDict]:
        """``class S(TypedTensorDict["frozen"])``: tensordict's spelling of the options a
        ``TypedTensorDict`` takes, a base class to derive from. ``"frozen"`` locks every
        instance (as ``frozen=True``); ``"shadow"`` lets a field take the name of a method
        (see ``TensorClass["shadow"]``); they combine."""
        return option_base(TypedTensorDict, cls, options, _OPTIONS, _BASES, "TypedTensorDict")
