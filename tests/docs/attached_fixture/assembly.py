"""The assembled class: one line per operation."""

from __future__ import annotations

from tensorclass.engine.core.attach import class_op, op_property

from . import ops
from .ops import check


class Box:
    """A box of items."""

    permute = ops.permute
    from_items = class_op(ops.from_items)
    size = op_property(ops.size)
    writable_size = op_property(ops.size, ops.set_size)
    check = staticmethod(check)
    plain_classmethod = classmethod(ops.from_items)
    limit = 3
    #: A documented constant.
    label: str = "box"

    def save(self, path: str) -> None:
        """Save the box."""

    dumps = save
