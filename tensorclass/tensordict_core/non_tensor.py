"""Non-tensor leaves, re-exported for the engine (defined in :mod:`tensorclass.non_tensor`)."""

from ..non_tensor import (
    LIVE_WRAPPERS,
    NonTensorData,
    NonTensorStack,
    cat_non_tensors,
    is_non_tensor,
    object_array,
    same_value,
    stack_non_tensors,
)

__all__ = [
    "LIVE_WRAPPERS",
    "NonTensorData",
    "NonTensorStack",
    "cat_non_tensors",
    "is_non_tensor",
    "object_array",
    "same_value",
    "stack_non_tensors",
]
