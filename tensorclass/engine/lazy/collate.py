"""``DataLoader`` batching: a batch of tensor classes is stacked into one tensor class.

``torch.utils.data.default_collate`` looks up element types in
``default_collate_fn_map``; registering the engine's base class there makes every tensor
class (``TensorDict`` and typed classes) collate with ``torch.stack``:

>>> import torch
>>> from torch.utils.data import DataLoader
>>> from tensorclass import TensorDict
>>> items = [TensorDict({"x": torch.full((3,), float(i))}) for i in range(10)]
>>> batch = next(iter(DataLoader(items, batch_size=4)))
>>> type(batch).__name__, batch.batch_size, batch["x"].shape
('TensorDict', torch.Size([4]), torch.Size([4, 3]))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch import Tensor
from torch.utils.data import default_collate
from torch.utils.data._utils.collate import default_collate_fn_map

from ...errors import KeyNotFoundError, TensorClassError
from ...keys import NestedKey, shown_key, unravel_key_tuple
from ...registry import dynamic_class
from ..core.self_types import Node
from ..core.state import TensorCore
from ..torch_api.functions import stack
from .stack import maybe_dense_stack

__all__ = ["collate", "collate_tensor_classes"]


def collate_tensor_classes(
    batch: Sequence[TensorCore],
    *,
    collate_fn_map: dict[type | tuple[type, ...], Callable[..., Any]] | None = None,
) -> Any:
    """Stack a batch of instances of one tensor class along a new first batch dim."""
    return stack(batch)


default_collate_fn_map[TensorCore] = collate_tensor_classes


def collate(
    batch: object,
    *,
    pad_keys: Mapping[Any, float] | None = None,
    nested_keys: Sequence[Any] | None = None,
    mask_key: Any = None,
) -> Any:
    """A ``collate_fn`` for ``DataLoader``: samples (tensor classes, or tuples and dicts
    holding them) into one batch.

    Tensor classes are stacked densely when their keys and shapes agree and lazily
    otherwise (:func:`~tensorclass.maybe_dense_stack`), keeping their class; tensors are
    stacked; tuples (named tuples keep their type) and mappings are collated entry by
    entry; anything else goes to ``torch.utils.data.default_collate``. Anything but a
    non-empty list is returned as it is.

    For variable-length entries of samples without batch dims (pass the options with
    ``functools.partial``): ``pad_keys`` maps keys to a padding value: those entries are
    padded along their first dim to the longest sample; ``mask_key`` then stores, under
    that key, one boolean mask per padded key (``True`` on real elements).
    ``nested_keys`` are stacked as jagged ``torch.nested`` tensors (the other entries must
    then stack densely).

    >>> import torch
    >>> from functools import partial
    >>> from tensorclass import TensorDict, collate
    >>> samples = [TensorDict(ids=torch.ones(n, dtype=torch.long)) for n in (2, 4)]
    >>> batch = collate(samples, pad_keys={"ids": 0}, mask_key="mask")
    >>> batch["ids"].tolist(), batch["mask", "ids"].sum(1).tolist()
    ([[1, 1, 0, 0], [1, 1, 1, 1]], [2, 4])
    """
    if not isinstance(batch, list) or not batch:
        return batch
    first = batch[0]
    options = {"pad_keys": pad_keys, "nested_keys": nested_keys, "mask_key": mask_key}
    if isinstance(first, TensorCore):
        return _collate_instances(batch, pad_keys, nested_keys, mask_key)
    if isinstance(first, Tensor):
        return torch.stack(batch)
    if isinstance(first, Mapping):
        return {key: collate([sample[key] for sample in batch], **options) for key in first}
    if isinstance(first, tuple):
        columns = [collate(list(column), **options) for column in zip(*batch)]
        return type(first)(*columns) if hasattr(first, "_fields") else tuple(columns)
    return default_collate(batch)


def _collate_instances(
    batch: list[Node],
    pad_keys: Mapping[NestedKey, float] | None,
    nested_keys: Sequence[NestedKey] | None,
    mask_key: NestedKey | None,
) -> Node:
    pads = {unravel_key_tuple(key): value for key, value in (pad_keys or {}).items()}
    nested = [unravel_key_tuple(key) for key in (nested_keys or ())]
    if mask_key is not None and not pads:
        raise ValueError("collate: mask_key needs pad_keys")
    both = set(pads) & set(nested)
    if both:
        raise ValueError(f"collate: {sorted(both)} are in both pad_keys and nested_keys")
    if pads and any(sample.batch_size for sample in batch):
        raise ValueError(
            "collate: pad_keys needs samples without batch dims; got batch_size="
            f"{list(batch[0].batch_size)}"
        )
    if mask_key is not None and unravel_key_tuple(mask_key) in batch[0]:
        raise ValueError(f"collate: mask_key {mask_key!r} is already an entry of the samples")
    for key in (*pads, *nested):
        for index, sample in enumerate(batch):
            if key not in sample:
                raise KeyNotFoundError(
                    f"collate: sample {index} has no entry {shown_key(key)!r} (named in "
                    f"{'pad_keys' if key in pads else 'nested_keys'})",
                    key=key,
                )
    lengths = {key: [sample.get(key).shape[0] for sample in batch] for key in pads}
    if pads:  # pad every sample's entries to the longest: the samples then stack densely
        batch = [sample.copy() for sample in batch]
        for key, value in pads.items():
            longest = max(lengths[key])
            for sample, length in zip(batch, lengths[key]):
                leaf = sample.get(key)
                if length < longest:
                    filler = leaf.new_full((longest - length, *leaf.shape[1:]), value)
                    sample.set(key, torch.cat([leaf, filler]))
    ragged = {key: [sample.get(key) for sample in batch] for key in nested}
    if nested:
        rest = [sample.exclude(*nested) for sample in batch]
        try:
            result = stack(rest)
        except TensorClassError as err:
            raise ValueError(
                f"collate: with nested_keys the other entries must stack densely: {err}"
            ) from err
        for key, tensors in ragged.items():
            result.set(key, torch.nested.nested_tensor(tensors, layout=torch.jagged))
    else:
        result = maybe_dense_stack(batch)
    if mask_key is not None:
        masks = {
            key: torch.arange(max(sizes)) < torch.tensor(sizes)[:, None]
            for key, sizes in lengths.items()
        }
        result.set(mask_key, dynamic_class().from_dict(masks, batch_size=[len(batch)]))
    return result
