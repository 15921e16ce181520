"""Stand-in ``TensorDictSequential``: the agreed signature, generic in the schema class."""

from collections.abc import Sequence
from typing import Any, TypeVar

from tensorclass import NestedKey, TensorDictBase

from .module import TensorDictModule

S = TypeVar("S", bound=TensorDictBase)


class TensorDictSequential(TensorDictModule[S]):
    """Runs modules one after the other on one tensor class."""

    def __init__(
        self,
        *modules: TensorDictModule[Any],
        partial_tolerant: bool = False,
        selected_out_keys: Sequence[NestedKey] | None = None,
        schema: type[S] | None = None,
    ) -> None:
        super().__init__(lambda: None, [], [], schema=schema)
