"""Non-tensor values as JSON, re-exported for the engine (see :mod:`tensorclass.json_values`)."""

from ..json_values import (
    json_exact,
    non_tensor_from_json,
    non_tensor_to_json,
    rebuilder_in,
    rebuilder_of,
)

__all__ = [
    "json_exact",
    "non_tensor_from_json",
    "non_tensor_to_json",
    "rebuilder_in",
    "rebuilder_of",
]
