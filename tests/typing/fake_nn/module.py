"""Stand-in ``TensorDictModule``: the agreed signature, generic in the schema class."""

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from torch import nn

from tensorclass import NestedKey, TensorDictBase

S = TypeVar("S", bound=TensorDictBase)

InKeys = NestedKey | Sequence[NestedKey] | Mapping[NestedKey, str]
OutKeys = NestedKey | Sequence[NestedKey]


class TensorDictModule(nn.Module, Generic[S]):
    """Reads ``in_keys``, calls ``module``, writes ``out_keys``."""

    def __init__(
        self,
        module: Callable[..., Any],
        in_keys: InKeys,
        out_keys: OutKeys,
        *,
        schema: type[S] | None = None,
        inplace: bool = True,
    ) -> None:
        super().__init__()
        self.schema = schema
