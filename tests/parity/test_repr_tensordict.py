"""The printed form is tensordict 0.15.3's (issue 22): ``repr`` of TensorDict, nested and
typed instances, lazy stacks, non-tensor values, ``TensorDictParams``, under
``set_printoptions`` as in tensordict.

Each case is built by one function taking the package (``tensorclass``, or ``tensordict``
for the side-by-side check) and states the text tensordict 0.15.3 prints for it.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import pytest
import torch

import tensorclass


@functools.cache
def classes(m):
    @m.tensorclass
    class Item:
        a: torch.Tensor
        b: str
        c: int = None

    @m.tensorclass
    class Holder:
        x: Item
        d: torch.Tensor

    return Item, Holder


def item(m, text="hi"):
    Item, _ = classes(m)
    return Item(a=torch.zeros(3), b=text, batch_size=[3])


def flat(m):
    return m.TensorDict(a=torch.zeros(3, 4), b=torch.ones(3, dtype=torch.int64), batch_size=[3])


def nested(m):
    sub = m.TensorDict(c=torch.zeros(3, 2, dtype=torch.bool), batch_size=[3, 2])
    return m.TensorDict(a=torch.zeros(3, 4), sub=sub, batch_size=[3])


def two(m):
    sub = m.TensorDict(c=torch.zeros(2), batch_size=[2])
    return m.TensorDict(b=torch.zeros(2, 3), a=sub, batch_size=[2])


def wide(m):
    td = m.TensorDict({f"key_number_{i}": torch.zeros(2, 3) for i in range(6)}, batch_size=[2])
    td["nest"] = m.TensorDict({f"inner_{i}": torch.zeros(2, i) for i in range(8)}, batch_size=[2])
    return td


def diff_keys(m):
    return m.lazy_stack(
        [
            m.TensorDict(a=torch.zeros(3), b=torch.zeros(1)),
            m.TensorDict(a=torch.ones(3), c=torch.zeros(2)),
        ]
    )


CASES = {
    "empty": lambda m: m.TensorDict(),
    "flat": flat,
    "nested_extra_batch_dims": nested,
    "names_not_shown": lambda m: m.TensorDict(
        a=torch.zeros(3, 4), batch_size=[3, 4], names=["x", "y"]
    ),
    "device": lambda m: m.TensorDict(a=torch.zeros(3, 4), batch_size=[3], device="cpu"),
    "leaf_off_cpu": lambda m: m.TensorDict(a=torch.zeros(3, 4, device="meta"), batch_size=[3]),
    "device_meta": lambda m: m.TensorDict(
        a=torch.zeros(3, 4, device="meta"), batch_size=[3], device="meta"
    ),
    "non_tensor": lambda m: m.TensorDict(a="hello", b=3, batch_size=[]),
    "long_non_tensor": lambda m: m.TensorDict(a="x" * 200),
    "non_tensor_dict": lambda m: m.TensorDict(a=m.NonTensorData({"k": 1})),
    "non_tensor_data": lambda m: m.NonTensorData("hi"),
    "non_tensor_data_batched": lambda m: m.NonTensorData("hi", batch_size=[2]),
    "non_tensor_stack": lambda m: m.NonTensorStack("a", "b"),
    "non_tensor_stack_cut": lambda m: m.NonTensorStack(*[str(i) for i in range(30)]),
    "stack_of_strings": lambda m: torch.stack([m.TensorDict(a="x"), m.TensorDict(a="y")]),
    "lazy": lambda m: m.lazy_stack([m.TensorDict(a=torch.zeros(3)), m.TensorDict(a=torch.ones(3))]),
    "lazy_exclusive_fields": diff_keys,
    "lazy_dim1": lambda m: m.lazy_stack(
        [
            m.TensorDict(a=torch.zeros(2, 3), batch_size=[2]),
            m.TensorDict(a=torch.ones(2, 3), batch_size=[2]),
        ],
        1,
    ),
    "lazy_nested": lambda m: m.lazy_stack(
        [
            m.TensorDict(s=m.TensorDict(a=torch.zeros(3))),
            m.TensorDict(s=m.TensorDict(a=torch.zeros(3))),
        ]
    ),
    "lazy_shapes_differ": lambda m: m.lazy_stack(
        [
            m.TensorDict(a=torch.zeros(3), b=torch.zeros(2)),
            m.TensorDict(a=torch.zeros(4), b=torch.zeros(2, dtype=torch.float64)),
        ]
    ),
    "lazy_ranks_differ": lambda m: m.lazy_stack(
        [m.TensorDict(a=torch.zeros(3)), m.TensorDict(a=torch.zeros(3, 2))]
    ),
    "lazy_strings": lambda m: m.lazy_stack([m.TensorDict(a="x"), m.TensorDict(a="y")]),
    "lazy_inside": lambda m: m.TensorDict(
        a=m.lazy_stack([m.TensorDict(a=torch.zeros(3)), m.TensorDict(a=torch.zeros(3))])
    ),
    "memory_mapped_leaf": lambda m: m.TensorDict(
        a=m.MemoryMappedTensor.from_tensor(torch.zeros(3)), batch_size=[3]
    ),
    "grad_leaf": lambda m: m.TensorDict(a=torch.zeros(3, requires_grad=True), batch_size=[3]),
    "params": lambda m: m.TensorDictParams(
        m.TensorDict(a=torch.zeros(3), b=m.TensorDict(c=torch.zeros(2)))
    ),
    "params_inside": lambda m: m.TensorDict(p=m.TensorDictParams(m.TensorDict(a=torch.zeros(3)))),
    "odd_keys": lambda m: m.TensorDict(
        {"a b": torch.zeros(2), "1": torch.zeros(1), "": torch.zeros(1)}
    ),
    "dtypes": lambda m: m.TensorDict(
        a=torch.zeros(2, dtype=torch.uint8),
        b=torch.zeros(2, dtype=torch.float16),
        c=torch.zeros(2, dtype=torch.int8),
        d=torch.zeros(2, dtype=torch.float64),
        e=torch.zeros(2, dtype=torch.complex64),
        f=torch.zeros(2, dtype=torch.bfloat16),
    ),
    "wide": wide,
    "unbatched": lambda m: m.TensorDict(
        x=torch.zeros(3), u=m.UnbatchedTensor(torch.zeros(5)), batch_size=[3]
    ),
    "tensorclass": item,
    "tensorclass_nested": lambda m: classes(m)[1](x=item(m), d=torch.zeros(3, 2), batch_size=[3]),
    "tensorclass_stack": lambda m: torch.stack([item(m), item(m, "ho")]),
    "tensorclass_lazy_stack": lambda m: m.lazy_stack([item(m), item(m, "ho")]),
    "tensorclass_device": lambda m: classes(m)[0](
        a=torch.zeros(3), b="hi", batch_size=[3], device="cpu"
    ),
    "tensorclass_inside": lambda m: m.TensorDict(x=item(m), batch_size=[3]),
}


@functools.cache
def hidden_class(m):
    @m.tensorclass
    class Hidden:
        a: torch.Tensor
        secret: torch.Tensor = dataclasses.field(default=None, repr=False)

    return Hidden


def stacked_stacks(m):
    def inner():
        return m.lazy_stack([m.TensorDict(a=torch.zeros(3)), m.TensorDict(a=torch.zeros(3))])

    return m.lazy_stack([inner(), inner()])


def deep(m):
    level = m.TensorDict(d=torch.zeros(2, 2, 2, 2, 5), batch_size=[2, 2, 2, 2])
    for name, dims in (("c", 3), ("b", 2), ("a", 1)):
        level = m.TensorDict({name: level}, batch_size=[2] * dims)
    return level


CASES.update(
    {
        "field_repr_false": lambda m: hidden_class(m)(
            a=torch.zeros(2), secret=torch.zeros(2), batch_size=[2]
        ),
        "lazy_of_lazy": stacked_stacks,
        "locked": lambda m: m.TensorDict(a=torch.zeros(2), batch_size=[2]).lock_(),
        "indexed": lambda m: m.TensorDict(a=torch.zeros(4, 2), batch_size=[4])[1:3],
        "nested_with_names": lambda m: m.TensorDict(
            a=m.TensorDict(b=torch.zeros(2, 3), batch_size=[2, 3]), batch_size=[2], names=["n"]
        ),
        "nested_off_cpu": lambda m: m.TensorDict(
            a=m.TensorDict(b=torch.zeros(2, 3, device="meta"), batch_size=[2]), batch_size=[2]
        ),
        "python_values": lambda m: m.TensorDict(a=True, b=1.5, c=m.NonTensorData(None)),
        "metadata": lambda m: m.TensorDict(cfg=m.MetaData({"lr": 1})),
        "many_keys": lambda m: m.TensorDict(
            {k: torch.zeros(1) for k in "abcdefghijklmnopqrstuvwxyz"}
        ),
        "deep": deep,
        "long_key": lambda m: m.TensorDict({"x" * 90: torch.zeros(1)}),
        "lazy_device": lambda m: m.lazy_stack(
            [
                m.TensorDict(a=torch.zeros(3), device="cpu"),
                m.TensorDict(a=torch.zeros(3), device="cpu"),
            ]
        ),
        "lazy_exclusive_nested": lambda m: m.lazy_stack(
            [
                m.TensorDict(a=torch.zeros(3), n=m.TensorDict(x=torch.zeros(2))),
                m.TensorDict(a=torch.ones(3)),
            ]
        ),
    }
)


@functools.cache
def typed_dict_class(m):
    class State(m.TypedTensorDict):
        eta: torch.Tensor

    return State


def typed_dict(m, extra=False):
    state = typed_dict_class(m)(eta=torch.zeros(4), batch_size=[4])
    if extra:
        state["extra"] = torch.zeros(4, 2)
    return state


CASES.update(
    {
        "typed_tensordict": typed_dict,
        "typed_tensordict_extra_key": lambda m: typed_dict(m, extra=True),
        "typed_tensordict_lazy_stack": lambda m: m.lazy_stack([typed_dict(m), typed_dict(m)]),
        "unsqueezed": lambda m: m.TensorDict(a=torch.zeros(4), batch_size=[4]).unsqueeze(0),
        "nested_from_dict": lambda m: m.TensorDict({"a": {"b": torch.zeros(2)}}, batch_size=[2]),
    }
)
OPTION_CASES_MORE = {
    "detailed_lazy_ranks_differ": ("lazy_ranks_differ", {"compact": False}),
    "detailed_field_repr_false": ("field_repr_false", {"compact": False}),
    "detailed_metadata": ("metadata", {"compact": False}),
    "no_dtype_lazy": ("lazy_shapes_differ", {"show_dtype": False}),
    "detailed_typed_tensordict": ("typed_tensordict_extra_key", {"compact": False}),
}


#: (case, options) pairs printed under set_printoptions(**options)
OPTION_CASES = {
    "insertion_order": ("two", {"sort_keys": None}),
    "no_dtype": ("two", {"show_dtype": False}),
    "no_batch_size": ("two", {"show_batch_size": False}),
    "no_device": ("device", {"show_device": False}),
    "not_verbose": ("two", {"verbose": False}),
    "callable_sort": ("two", {"sort_keys": "LEN"}),
    "detailed": ("flat", {"compact": False}),
    "detailed_nested": ("two", {"compact": False}),
    "detailed_empty": ("empty", {"compact": False}),
    "detailed_non_tensor": ("non_tensor", {"compact": False}),
    "detailed_lazy": ("lazy", {"compact": False}),
    "detailed_lazy_exclusive": ("lazy_exclusive_fields", {"compact": False}),
    "detailed_lazy_nested": ("lazy_nested", {"compact": False}),
    "detailed_tensorclass": ("tensorclass", {"compact": False}),
    "detailed_tensorclass_nested": ("tensorclass_nested", {"compact": False}),
    "detailed_device": ("device", {"compact": False}),
    "detailed_stack_of_strings": ("stack_of_strings", {"compact": False}),
    "detailed_unbatched": ("unbatched", {"compact": False}),
    "detailed_not_verbose": ("flat", {"compact": False, "verbose": False}),
    "no_shape": ("two", {"show_shape": False}),
    "no_is_shared": ("two", {"show_is_shared": False}),
    "no_field_device": ("two", {"show_field_device": False}),
    "grad": ("two", {"show_grad": True}),
    "contiguous": ("two", {"show_is_contiguous": True}),
    "view": ("two", {"show_is_view": True}),
    "storage_size": ("two", {"show_storage_size": True}),
    "plain": ("plain", {"plain": True}),
    "compact_ignores_detailed_options": ("two", {"compact": True, "show_shape": False}),
}
OPTION_CASES.update(OPTION_CASES_MORE)
CASES["two"] = two
CASES["plain"] = lambda m: m.TensorDict(
    a=torch.arange(4), b=torch.ones(1), c=torch.zeros(0), d=torch.arange(3.0)
)


def render(m: Any, name: str, options: dict[str, Any] | None = None) -> str:
    if options is None:
        return repr(CASES[name](m))
    options = dict(options)
    if options.get("sort_keys") == "LEN":
        options["sort_keys"] = lambda text: -len(text)
    with m.set_printoptions(**options):
        return repr(CASES[name](m))


#: what tensordict 0.15.3 prints for each case (``opt:`` cases under their options)
EXPECTED: dict[str, str] = {
    "empty": "TensorDict(batch_size=[], fields={})",
    "flat": "TensorDict(batch_size=[3], fields={a: f32[4], b: i64[]})",
    "nested_extra_batch_dims": "TensorDict(batch_size=[3], fields={a: f32[4], sub: [2]{c: bool[]}})",
    "names_not_shown": "TensorDict(batch_size=[3,4], fields={a: f32[]})",
    "device": "TensorDict(batch_size=[3], device=cpu, fields={a: f32[4]})",
    "leaf_off_cpu": "TensorDict(batch_size=[3], fields={a: f32[4]@meta})",
    "device_meta": "TensorDict(batch_size=[3], device=meta, fields={a: f32[4]})",
    "non_tensor": "TensorDict(batch_size=[], fields={a: str, b: i64[]})",
    "long_non_tensor": "TensorDict(batch_size=[], fields={a: str})",
    "non_tensor_dict": "TensorDict(batch_size=[], fields={a: dict})",
    "non_tensor_data": "NonTensorData(data=hi, batch_size=torch.Size([]), device=None)",
    "non_tensor_data_batched": "NonTensorData(data=hi, batch_size=torch.Size([2]), device=None)",
    "non_tensor_stack": "NonTensorStack(\n    ['a', 'b'],\n    batch_size=torch.Size([2]),\n    device=None)",
    "non_tensor_stack_cut": "NonTensorStack(\n    ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9',...,\n    batch_size=torch.Size([30]),\n    device=None)",
    "stack_of_strings": "TensorDict(batch_size=[2], fields={a: NonTensorStack})",
    "lazy": "LazyStackedTensorDict(batch_size=[2], stack_dim=0, fields={a: f32[3]})",
    "lazy_exclusive_fields": "LazyStackedTensorDict(batch_size=[2], stack_dim=0, fields={\n    a: f32[3]}, exclusive_fields={0: {b: f32[1]}, 1: {c: f32[2]}})",
    "lazy_dim1": "LazyStackedTensorDict(batch_size=[2,2], stack_dim=1, fields={a: f32[3]})",
    "lazy_nested": "LazyStackedTensorDict(batch_size=[2], stack_dim=0, fields={s: {a: f32[3]}})",
    "lazy_shapes_differ": "LazyStackedTensorDict(batch_size=[2], stack_dim=0, fields={\n    a: f32[-1],\n    b: f64[2]})",
    "lazy_ranks_differ": "LazyStackedTensorDict(batch_size=[2], stack_dim=0, fields={a: f32[-1]})",
    "lazy_strings": "LazyStackedTensorDict(batch_size=[2], stack_dim=0, fields={a: str})",
    "lazy_inside": "TensorDict(batch_size=[], fields={a: LazyStackedTensorDict[2]{a: f32[3]}})",
    "memory_mapped_leaf": "TensorDict(batch_size=[3], fields={a: f32[]})",
    "grad_leaf": "TensorDict(batch_size=[3], fields={a: f32[]})",
    "params": "TensorDictParams(params=TensorDict(batch_size=[], fields={a: f32[3], b: {c: f32[2]}}))",
    "params_inside": "TensorDict(batch_size=[], fields={p: TensorDictParams{a: f32[3]}})",
    "odd_keys": "TensorDict(batch_size=[], fields={1: f32[1], : f32[1], a b: f32[2]})",
    "dtypes": "TensorDict(batch_size=[], fields={\n    a: u8[2],\n    b: f16[2],\n    c: i8[2],\n    d: f64[2],\n    e: c64[2],\n    f: bf16[2]})",
    "wide": "TensorDict(batch_size=[2], fields={\n    key_number_0: f32[3],\n    key_number_1: f32[3],\n    key_number_2: f32[3],\n    key_number_3: f32[3],\n    key_number_4: f32[3],\n    key_number_5: f32[3],\n    nest: {\n        inner_0: f32[0],\n        inner_1: f32[1],\n        inner_2: f32[2],\n        inner_3: f32[3],\n        inner_4: f32[4],\n        inner_5: f32[5],\n        inner_6: f32[6],\n        inner_7: f32[7]}})",
    "unbatched": "TensorDict(batch_size=[3], fields={u: f32[5], x: f32[]})",
    "tensorclass": "Item(batch_size=[3], fields={a: f32[], b: str, c: None})",
    "tensorclass_nested": "Holder(batch_size=[3], fields={d: f32[2], x: Item{a: f32[], b: str, c: None}})",
    "tensorclass_stack": "Item(batch_size=[2,3], fields={a: f32[], b: NonTensorStack, c: None})",
    "tensorclass_lazy_stack": "Item(batch_size=[2,3], fields={a: f32[], b: str, c: None})",
    "tensorclass_device": "Item(batch_size=[3], device=cpu, fields={a: f32[], b: str, c: None})",
    "tensorclass_inside": "TensorDict(batch_size=[3], fields={x: Item{a: f32[], b: str, c: None}})",
    "two": "TensorDict(batch_size=[2], fields={a: {c: f32[]}, b: f32[3]})",
    "plain": "TensorDict(batch_size=[], fields={a: i64[4], b: f32[1], c: f32[0], d: f32[3]})",
    "opt:insertion_order": "TensorDict(batch_size=[2], fields={b: f32[3], a: {c: f32[]}})",
    "opt:no_dtype": "TensorDict(batch_size=[2], fields={a: {c: []}, b: [3]})",
    "opt:no_batch_size": "TensorDict(fields={a: {c: f32[]}, b: f32[3]})",
    "opt:no_device": "TensorDict(batch_size=[3], fields={a: f32[4]})",
    "opt:not_verbose": "TensorDict(batch_size=[2], fields={a: {c: []}, b: [3]})",
    "opt:callable_sort": "TensorDict(batch_size=[2], fields={a: {c: f32[]}, b: f32[3]})",
    "opt:detailed": "TensorDict(\n    fields={\n        a: Tensor(shape=torch.Size([3, 4]), device=cpu, dtype=torch.float32, is_shared=False),\n        b: Tensor(shape=torch.Size([3]), device=cpu, dtype=torch.int64, is_shared=False)},\n    batch_size=torch.Size([3]),\n    device=None,\n    is_shared=False)",
    "opt:detailed_nested": "TensorDict(\n    fields={\n        a: TensorDict(\n            fields={\n                c: Tensor(shape=torch.Size([2]), device=cpu, dtype=torch.float32, is_shared=False)},\n            batch_size=torch.Size([2]),\n            device=None,\n            is_shared=False),\n        b: Tensor(shape=torch.Size([2, 3]), device=cpu, dtype=torch.float32, is_shared=False)},\n    batch_size=torch.Size([2]),\n    device=None,\n    is_shared=False)",
    "opt:detailed_empty": "TensorDict(\n    fields={\n    },\n    batch_size=torch.Size([]),\n    device=None,\n    is_shared=False)",
    "opt:detailed_non_tensor": "TensorDict(\n    fields={\n        a: NonTensorData(data=hello, batch_size=torch.Size([]), device=None),\n        b: Tensor(shape=torch.Size([]), device=cpu, dtype=torch.int64, is_shared=False)},\n    batch_size=torch.Size([]),\n    device=None,\n    is_shared=False)",
    "opt:detailed_lazy": "LazyStackedTensorDict(\n    fields={\n        a: Tensor(shape=torch.Size([2, 3]), device=cpu, dtype=torch.float32, is_shared=False)},\n    exclusive_fields={\n    },\n    batch_size=torch.Size([2]),\n    device=None,\n    is_shared=False,\n    stack_dim=0)",
    "opt:detailed_lazy_exclusive": "LazyStackedTensorDict(\n    fields={\n        a: Tensor(shape=torch.Size([2, 3]), device=cpu, dtype=torch.float32, is_shared=False)},\n    exclusive_fields={\n        0 ->\n            b: Tensor(shape=torch.Size([1]), device=cpu, dtype=torch.float32, is_shared=False),\n        1 ->\n            c: Tensor(shape=torch.Size([2]), device=cpu, dtype=torch.float32, is_shared=False)},\n    batch_size=torch.Size([2]),\n    device=None,\n    is_shared=False,\n    stack_dim=0)",
    "opt:detailed_lazy_nested": "LazyStackedTensorDict(\n    fields={\n        s: LazyStackedTensorDict(\n            fields={\n                a: Tensor(shape=torch.Size([2, 3]), device=cpu, dtype=torch.float32, is_shared=False)},\n            exclusive_fields={\n            },\n            batch_size=torch.Size([2]),\n            device=None,\n            is_shared=False,\n            stack_dim=0)},\n    exclusive_fields={\n    },\n    batch_size=torch.Size([2]),\n    device=None,\n    is_shared=False,\n    stack_dim=0)",
    "opt:detailed_tensorclass": "Item(\n    a=Tensor(shape=torch.Size([3]), device=cpu, dtype=torch.float32, is_shared=False),\n    b=NonTensorData(data=hi, batch_size=torch.Size([3]), device=None),\n    c=None,\n    batch_size=torch.Size([3]),\n    device=None,\n    is_shared=False)",
    "opt:detailed_tensorclass_nested": "Holder(\n    d=Tensor(shape=torch.Size([3, 2]), device=cpu, dtype=torch.float32, is_shared=False),\n    x=Item(\n        a=Tensor(shape=torch.Size([3]), device=cpu, dtype=torch.float32, is_shared=False),\n        b=NonTensorData(data=hi, batch_size=torch.Size([3]), device=None),\n        c=None,\n        batch_size=torch.Size([3]),\n        device=None,\n        is_shared=False),\n    batch_size=torch.Size([3]),\n    device=None,\n    is_shared=False)",
    "opt:detailed_device": "TensorDict(\n    fields={\n        a: Tensor(shape=torch.Size([3, 4]), device=cpu, dtype=torch.float32, is_shared=False)},\n    batch_size=torch.Size([3]),\n    device=cpu,\n    is_shared=False)",
    "opt:detailed_stack_of_strings": "TensorDict(\n    fields={\n        a: NonTensorStack(\n            ['x', 'y'],\n            batch_size=torch.Size([2]),\n            device=None)},\n    batch_size=torch.Size([2]),\n    device=None,\n    is_shared=False)",
    "opt:detailed_unbatched": "TensorDict(\n    fields={\n        u: UnbatchedTensor(shape=torch.Size([5]), device=cpu, dtype=torch.float32, is_shared=False),\n        x: Tensor(shape=torch.Size([3]), device=cpu, dtype=torch.float32, is_shared=False)},\n    batch_size=torch.Size([3]),\n    device=None,\n    is_shared=False)",
    "opt:detailed_not_verbose": "TensorDict(\n    fields={\n        a: Tensor(shape=torch.Size([3, 4])),\n        b: Tensor(shape=torch.Size([3]))},\n    batch_size=torch.Size([3]))",
    "opt:no_shape": "TensorDict(\n    fields={\n        a: TensorDict(\n            fields={\n                c: Tensor(device=cpu, dtype=torch.float32, is_shared=False)},\n            batch_size=torch.Size([2]),\n            device=None,\n            is_shared=False),\n        b: Tensor(device=cpu, dtype=torch.float32, is_shared=False)},\n    batch_size=torch.Size([2]),\n    device=None,\n    is_shared=False)",
    "opt:no_is_shared": "TensorDict(\n    fields={\n        a: TensorDict(\n            fields={\n                c: Tensor(shape=torch.Size([2]), device=cpu, dtype=torch.float32, is_shared=False)},\n            batch_size=torch.Size([2]),\n            device=None),\n        b: Tensor(shape=torch.Size([2, 3]), device=cpu, dtype=torch.float32, is_shared=False)},\n    batch_size=torch.Size([2]),\n    device=None)",
    "opt:no_field_device": "TensorDict(\n    fields={\n        a: TensorDict(\n            fields={\n                c: Tensor(shape=torch.Size([2]), dtype=torch.float32, is_shared=False)},\n            batch_size=torch.Size([2]),\n            device=None,\n            is_shared=False),\n        b: Tensor(shape=torch.Size([2, 3]), dtype=torch.float32, is_shared=False)},\n    batch_size=torch.Size([2]),\n    device=None,\n    is_shared=False)",
    "opt:grad": "TensorDict(\n    fields={\n        a: TensorDict(\n            fields={\n                c: Tensor(shape=torch.Size([2]), device=cpu, dtype=torch.float32, is_shared=False, requires_grad=False)},\n            batch_size=torch.Size([2]),\n            device=None,\n            is_shared=False),\n        b: Tensor(shape=torch.Size([2, 3]), device=cpu, dtype=torch.float32, is_shared=False, requires_grad=False)},\n    batch_size=torch.Size([2]),\n    device=None,\n    is_shared=False)",
    "opt:contiguous": "TensorDict(\n    fields={\n        a: TensorDict(\n            fields={\n                c: Tensor(shape=torch.Size([2]), device=cpu, dtype=torch.float32, is_shared=False, is_contiguous=True)},\n            batch_size=torch.Size([2]),\n            device=None,\n            is_shared=False),\n        b: Tensor(shape=torch.Size([2, 3]), device=cpu, dtype=torch.float32, is_shared=False, is_contiguous=True)},\n    batch_size=torch.Size([2]),\n    device=None,\n    is_shared=False)",
    "opt:view": "TensorDict(\n    fields={\n        a: TensorDict(\n            fields={\n                c: Tensor(shape=torch.Size([2]), device=cpu, dtype=torch.float32, is_shared=False, is_view=False)},\n            batch_size=torch.Size([2]),\n            device=None,\n            is_shared=False),\n        b: Tensor(shape=torch.Size([2, 3]), device=cpu, dtype=torch.float32, is_shared=False, is_view=False)},\n    batch_size=torch.Size([2]),\n    device=None,\n    is_shared=False)",
    "opt:storage_size": "TensorDict(\n    fields={\n        a: TensorDict(\n            fields={\n                c: Tensor(shape=torch.Size([2]), device=cpu, dtype=torch.float32, is_shared=False, storage_size=8)},\n            batch_size=torch.Size([2]),\n            device=None,\n            is_shared=False),\n        b: Tensor(shape=torch.Size([2, 3]), device=cpu, dtype=torch.float32, is_shared=False, storage_size=24)},\n    batch_size=torch.Size([2]),\n    device=None,\n    is_shared=False)",
    "opt:plain": "TensorDict(\n    fields={\n        a: Tensor(shape=torch.Size([4]), device=cpu, dtype=torch.int64, is_shared=False, min=0, max=3),\n        b: Tensor(shape=torch.Size([1]), device=cpu, dtype=torch.float32, is_shared=False, mean=1, std=nan),\n        c: Tensor(shape=torch.Size([0]), device=cpu, dtype=torch.float32, is_shared=False, []),\n        d: Tensor(shape=torch.Size([3]), device=cpu, dtype=torch.float32, is_shared=False, mean=1, std=1)},\n    batch_size=torch.Size([]),\n    device=None,\n    is_shared=False)",
    "opt:compact_ignores_detailed_options": "TensorDict(batch_size=[2], fields={a: {c: f32[]}, b: f32[3]})",
    "field_repr_false": "Hidden(batch_size=[2], fields={a: f32[]})",
    "lazy_of_lazy": "LazyStackedTensorDict(batch_size=[2,2], stack_dim=0, fields={a: f32[3]})",
    "locked": "TensorDict(batch_size=[2], fields={a: f32[]})",
    "indexed": "TensorDict(batch_size=[2], fields={a: f32[2]})",
    "nested_with_names": "TensorDict(batch_size=[2], fields={a: [3]{b: f32[]}})",
    "nested_off_cpu": "TensorDict(batch_size=[2], fields={a: {b: f32[3]@meta}})",
    "python_values": "TensorDict(batch_size=[], fields={a: bool[], b: f32[], c: NoneType})",
    "metadata": "TensorDict(batch_size=[], fields={cfg: MetaData})",
    "many_keys": "TensorDict(batch_size=[], fields={\n    a: f32[1],\n    b: f32[1],\n    c: f32[1],\n    d: f32[1],\n    e: f32[1],\n    f: f32[1],\n    g: f32[1],\n    h: f32[1],\n    i: f32[1],\n    j: f32[1],\n    k: f32[1],\n    l: f32[1],\n    m: f32[1],\n    n: f32[1],\n    o: f32[1],\n    p: f32[1],\n    q: f32[1],\n    r: f32[1],\n    s: f32[1],\n    t: f32[1],\n    u: f32[1],\n    v: f32[1],\n    w: f32[1],\n    x: f32[1],\n    y: f32[1],\n    z: f32[1]})",
    "deep": "TensorDict(batch_size=[2], fields={a: [2]{b: [2]{c: [2]{d: f32[5]}}}})",
    "long_key": "TensorDict(batch_size=[], fields={\n    xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx: f32[1]})",
    "lazy_device": "LazyStackedTensorDict(batch_size=[2], device=cpu, stack_dim=0, fields={\n    a: f32[3]})",
    "lazy_exclusive_nested": "LazyStackedTensorDict(batch_size=[2], stack_dim=0, fields={\n    a: f32[3]}, exclusive_fields={0: {n: {x: f32[2]}}})",
    "opt:detailed_lazy_ranks_differ": "LazyStackedTensorDict(\n    fields={\n        a: Tensor(shape=torch.Size([-1]), device=cpu, dtype=torch.float32, is_shared=False)},\n    exclusive_fields={\n    },\n    batch_size=torch.Size([2]),\n    device=None,\n    is_shared=False,\n    stack_dim=0)",
    "opt:detailed_field_repr_false": "Hidden(\n    a=Tensor(shape=torch.Size([2]), device=cpu, dtype=torch.float32, is_shared=False),\n    batch_size=torch.Size([2]),\n    device=None,\n    is_shared=False)",
    "opt:detailed_metadata": "TensorDict(\n    fields={\n        cfg: MetaData(data={'lr': 1}, batch_size=torch.Size([]), device=None)},\n    batch_size=torch.Size([]),\n    device=None,\n    is_shared=False)",
    "opt:no_dtype_lazy": "LazyStackedTensorDict(batch_size=[2], stack_dim=0, fields={a: [-1], b: [2]})",
    "typed_tensordict": "State(batch_size=[4], fields={eta: f32[]})",
    "typed_tensordict_extra_key": "State(batch_size=[4], fields={eta: f32[], extra: f32[2]})",
    "typed_tensordict_lazy_stack": "LazyStackedTensorDict(batch_size=[2,4], stack_dim=0, fields={eta: f32[]})",
    "unsqueezed": "TensorDict(batch_size=[1,4], fields={a: f32[]})",
    "nested_from_dict": "TensorDict(batch_size=[2], fields={a: {b: f32[]}})",
    "opt:detailed_typed_tensordict": "State(\n    fields={\n        eta: Tensor(shape=torch.Size([4]), device=cpu, dtype=torch.float32, is_shared=False),\n        extra: Tensor(shape=torch.Size([4, 2]), device=cpu, dtype=torch.float32, is_shared=False)},\n    batch_size=torch.Size([4]),\n    device=None,\n    is_shared=False)",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_repr_matches_tensordict(name: str) -> None:
    assert render(tensorclass, name) == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(OPTION_CASES))
def test_repr_under_printoptions_matches_tensordict(name: str) -> None:
    case, options = OPTION_CASES[name]
    assert render(tensorclass, case, options) == EXPECTED[f"opt:{name}"]


def test_str_is_repr_and_options_come_back() -> None:
    td = flat(tensorclass)
    assert str(td) == repr(td)
    assert str(item(tensorclass)) == repr(item(tensorclass))
    before = tensorclass.get_printoptions()
    with tensorclass.set_printoptions(show_grad=True):
        assert tensorclass.get_printoptions()["compact"] is False  # a detailed-only option
    with tensorclass.set_printoptions(show_grad=True, compact=True):
        assert repr(td) == EXPECTED["flat"]  # the compact form ignores it
    assert tensorclass.get_printoptions() == before
    assert before["sort_keys"] == "alphabetical" and before["compact"] is True


def test_repr_reads_no_value_and_keeps_a_lazy_stack_lazy() -> None:
    members = [tensorclass.TensorDict(a=torch.zeros(1000, 3)) for _ in range(50)]
    stack = tensorclass.lazy_stack(members)
    calls: list[str] = []

    class Watch(torch.overrides.TorchFunctionMode):
        def __torch_function__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            calls.append(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))

    with Watch():
        text = repr(stack)
    assert text == "LazyStackedTensorDict(batch_size=[50], stack_dim=0, fields={a: f32[1000,3]})"
    # metadata only: no leaf is stacked, copied or read
    assert calls and not {"stack", "cat", "tolist", "item", "clone", "__getitem__"} & set(calls)


def test_side_by_side_with_tensordict() -> None:
    tensordict = pytest.importorskip("tensordict")
    for name in CASES:
        assert render(tensordict, name) == EXPECTED[name], name
    for name, (case, options) in OPTION_CASES.items():
        assert render(tensordict, case, options) == EXPECTED[f"opt:{name}"], name


_UL = '<ul style="list-style:none;margin:0;padding-left:1.5em">'
_DIM = '<span style="opacity:0.7">'


def test_notebook_display_matches_tensordict() -> None:
    m = tensorclass
    sub = m.TensorDict(c=torch.zeros(3, 2), batch_size=[3, 2])
    td = m.TensorDict(a=torch.zeros(3, 4), sub=sub, s="x<y", batch_size=[3], names=["t"])
    assert td._repr_html_() == (
        '<div style="font-family:monospace;line-height:1.4"><details open><summary>'
        f"<b>TensorDict</b> {_DIM}batch_size=[3], names=[t]</span></summary>{_UL}"
        f"<li>a: {_DIM}f32[4]</span></li><li>s: {_DIM}str</span></li>"
        f"<li><details open><summary>sub: {_DIM}[2] 1 entry</span></summary>{_UL}"
        f"<li>c: {_DIM}f32[]</span></li></ul></details></li></ul></details></div>"
    )
    assert diff_keys(m)._repr_html_() == (
        '<div style="font-family:monospace;line-height:1.4"><details open><summary>'
        f"<b>LazyStackedTensorDict</b> {_DIM}batch_size=[2], stack_dim=0</span></summary>"
        f"{_UL}<li>a: {_DIM}f32[3]</span></li></ul>"
        '<details open style="padding-left:1.5em"><summary>'
        '<i style="opacity:0.7">exclusive_fields</i></summary>'
        f"{_UL}<li><details open><summary>0: {_DIM}1 entry</span></summary>{_UL}"
        f"<li>b: {_DIM}f32[1]</span></li></ul></details></li>"
        f"<li><details open><summary>1: {_DIM}1 entry</span></summary>{_UL}"
        f"<li>c: {_DIM}f32[2]</span></li></ul></details></li></ul></details></details></div>"
    )
    many = m.TensorDict({f"k{i:03d}": torch.zeros(1) for i in range(205)})._repr_html_()
    assert many is not None and many.count("<li>k") == 200
    assert many.endswith("<li>... and 5 more</li></ul></details></div>")
    with m.set_printoptions(compact=False):
        assert flat(m)._repr_html_() == f"<pre>{flat(m)!r}</pre>"
    with m.set_printoptions(html=False):
        assert flat(m)._repr_html_() is None


def test_notebook_display_side_by_side_with_tensordict() -> None:
    tensordict = pytest.importorskip("tensordict")
    for name in sorted(CASES):
        ours, theirs = CASES[name](tensorclass), CASES[name](tensordict)
        if hasattr(theirs, "_repr_html_") and hasattr(ours, "_repr_html_"):
            assert ours._repr_html_() == theirs._repr_html_(), name
