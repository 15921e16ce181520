"""Modules whose input and output are typed classes: ``TensorClassModuleBase[In, Out]``.

``forward`` takes an ``In`` and returns an ``Out``, so a type checker knows both and
reports a wrong field. ``as_td_module()`` gives a key-reading module (a
:class:`TensorClassModuleWrapper`) whose keys are the fields of the two classes, for a
:class:`~tensorclass.nn.TensorDictSequential`.

>>> import torch
>>> from tensorclass import TensorClass, TensorDict
>>> from tensorclass.nn import TensorClassModuleBase
>>> class Point(TensorClass):
...     x: torch.Tensor
...     y: torch.Tensor
>>> class Polar(TensorClass):
...     radius: torch.Tensor
>>> class ToPolar(TensorClassModuleBase[Point, Polar]):
...     def forward(self, p: Point) -> Polar:
...         return Polar(radius=(p.x**2 + p.y**2).sqrt(), batch_size=p.batch_size)
>>> ToPolar()(Point(x=torch.tensor([3.0]), y=torch.tensor([4.0]), batch_size=[1])).radius
tensor([5.])
>>> keyed = ToPolar().as_td_module()
>>> keyed.in_keys, keyed.out_keys
(['x', 'y'], ['radius'])
"""

from __future__ import annotations

from typing import Any, Generic, cast, get_args, get_origin

from torch import nn
from typing_extensions import TypeVar

from ..engine.core.state import TensorCore
from ..engine.ops import TensorOps
from ..schema import FieldKind, resolved_schema
from .base import FixedKeysModule, first_missing
from .keys import Key

__all__ = ["TensorClassModuleBase", "TensorClassModuleWrapper", "leaf_keys"]

In = TypeVar("In", default=Any)
Out = TypeVar("Out", default=Any)


def leaf_keys(cls: type, prefix: tuple[str, ...] = (), required: bool = False) -> list[Key]:
    """The keys of the leaves a typed class declares (nested classes followed); with
    ``required``, only those of required fields (below required nested fields)."""
    schema = resolved_schema(cls)
    if schema is None:
        return []
    keys: list[Key] = []
    for f in schema.fields:
        if required and not f.required:
            continue
        path = (*prefix, f.name)
        if f.kind is FieldKind.NESTED and f.nested_class is not None:
            keys.extend(leaf_keys(f.nested_class, path, required))
        else:
            keys.append(path if prefix else f.name)
    return keys


def _is_tensor_class(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, TensorCore)


class TensorClassModuleBase(nn.Module, Generic[In, Out]):
    """A module taking an ``In`` and returning an ``Out``; subclass
    ``TensorClassModuleBase[In, Out]`` and implement ``forward``.

    ``input_type`` and ``output_type`` are read from the subscript (each a tensor class or
    ``torch.Tensor``). See the module docstring for an example.
    """

    input_type: type
    output_type: type

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in getattr(cls, "__orig_bases__", ()):
            origin = get_origin(base)
            if isinstance(origin, type) and issubclass(origin, TensorClassModuleBase):
                args = get_args(base)
                if len(args) == 2 and all(isinstance(a, type) for a in args):
                    cls.input_type, cls.output_type = args
                    return

    def forward(self, x: In) -> Out:
        """Compute the output from the input (subclasses implement it)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement forward")

    def __call__(self, x: In) -> Out:
        """Call :meth:`forward` (with the hooks of ``nn.Module``)."""
        result: Out = super().__call__(x)
        return result

    def as_td_module(self) -> TensorClassModuleWrapper:
        """This module as a key-reading module (its keys are the classes' fields).

        Both ``input_type`` and ``output_type`` must be tensor classes.
        """
        return TensorClassModuleWrapper(self)


class TensorClassModuleWrapper(FixedKeysModule):
    """A :class:`TensorClassModuleBase` as a module reading and writing by key.

    The in keys are the leaves of the input class, the out keys those of the output
    class (nested classes give nested keys). A call builds the input instance from the
    given tensor class (sharing the tensors), runs the module and writes the output's
    leaves into the given instance, which it returns (like ``TensorDictModule``).
    """

    def __init__(self, module: TensorClassModuleBase[Any, Any]) -> None:
        super().__init__()
        in_type = getattr(module, "input_type", None)
        out_type = getattr(module, "output_type", None)
        if not (_is_tensor_class(in_type) and _is_tensor_class(out_type)):
            raise ValueError(
                f"TensorClassModuleWrapper: {type(module).__name__} must subclass "
                "TensorClassModuleBase[In, Out] with tensor classes In and Out; got "
                f"input_type={in_type!r}, output_type={out_type!r}"
            )
        self.module = module
        self._in_type: type[Any] = cast(type, in_type)
        self._in_keys = leaf_keys(cast(type, in_type))
        self._required = leaf_keys(cast(type, in_type), required=True)
        self._out_keys = leaf_keys(cast(type, out_type))

    def _set_in_keys(self, keys: list[Key]) -> None:
        self._refuse_keys("in_keys", "they are the leaves of the module's input class")

    def _set_out_keys(self, keys: list[Key]) -> None:
        self._refuse_keys("out_keys", "they are the leaves of the module's output class")

    def _forward_td(self, tensordict: TensorOps, tensordict_out: TensorOps | None) -> TensorOps:
        missing = first_missing(tensordict, self._required)
        if missing is not None:
            raise self._missing_input(tensordict, missing)
        present = [key for key in self._in_keys if key in tensordict]
        given = self._in_type.from_tensordict(tensordict.select(*present))
        result = self.module(given)
        target = tensordict if tensordict_out is None else tensordict_out
        for key in self.out_keys:
            value = result.get(key, None)
            if value is not None:
                target.set(key, value)
        return target

    def _repr_fields(self) -> list[tuple[str, str]]:
        return [("module", repr(self.module)), *super()._repr_fields()]
