"""The TensorDict and tensorclass examples of the seed documents, with our import.

Seeds 002 (overview) and 003 (project page). The nn, memmap, map and distributed examples
are tested with their features (tests/nn, tests/storage).
"""

import pytest
import torch

from tensorclass import TensorDict, tensorclass

# -- seed 002: overview -------------------------------------------------------------------


def test_motivation_unbind_plain_and_nested() -> None:
    td = TensorDict({"a": torch.randn(3, 11), "b": torch.randn(3, 3)}, batch_size=3)
    _, td1, _ = td.unbind(0)
    assert torch.equal(td1["a"], td["a"][1])
    td = TensorDict({"a": {"c": torch.randn(3, 11)}, "b": torch.randn(3, 3)}, batch_size=3)
    *_, td2 = td.unbind(0)
    assert torch.equal(td2["a", "c"], td["a", "c"][2])
    assert td2["a"].batch_size == torch.Size([])


def test_dispatch_splits_to_workers() -> None:
    td = TensorDict({"x": torch.arange(25)}, batch_size=[25])
    splits = torch.arange(td.shape[0]).split(10)
    parts = [td[idx] for idx in splits]
    assert [p.batch_size[0] for p in parts] == [10, 10, 5]
    assert torch.equal(torch.cat(parts)["x"], td["x"])


def test_features_get_set_index_reshape() -> None:
    tensordict = TensorDict(
        {"zeros": torch.zeros(2, 3, 4), "ones": torch.ones(2, 3, 4, 5)},
        batch_size=[2, 3],
    )
    zeros = tensordict["zeros"]
    assert zeros.shape == (2, 3, 4)
    tensordict["twos"] = 2 * torch.ones(2, 3)
    sub_tensordict = tensordict[..., :2]
    assert sub_tensordict.batch_size == (2, 2)
    assert sub_tensordict["ones"].shape == (2, 2, 4, 5)
    tensordict.set("twos", torch.zeros(2, 3), inplace=True)
    tensordict.set_("zeros", torch.ones(2, 3, 4))
    assert (tensordict["zeros"] == 1).all() and (tensordict["twos"] == 0).all()
    tensordict = tensordict.to("cpu")
    tensordict = tensordict.reshape(6)
    assert tensordict.batch_size == (6,) and tensordict["ones"].shape == (6, 4, 5)


def test_nested_tensordicts() -> None:
    tensordict = TensorDict(
        {
            "inputs": {
                "image": torch.rand(100, 28, 28),
                "mask": torch.randint(2, (100, 28, 28), dtype=torch.uint8),
            },
            "outputs": {"logits": torch.randn(100, 10)},
        },
        batch_size=[100],
    )
    assert isinstance(tensordict["inputs"], TensorDict)
    assert tensordict["inputs"].batch_size == (100,)
    image = tensordict["inputs", "image"]
    logits = tensordict.get(("outputs", "logits"))
    tensordict["outputs", "probabilities"] = torch.sigmoid(logits)
    assert image.shape == (100, 28, 28)
    assert torch.equal(tensordict["outputs"]["probabilities"], torch.sigmoid(logits))


def test_stacking_writes_reach_members() -> None:
    # Seed 002 shows a lazy stack; a dense stack copies. Writes through a lazy stack are
    # tested with lazy_stack; here: the dense stack has the same values and shapes.
    tensordicts = [
        TensorDict({"a": torch.rand(10), "b": torch.rand(10, 100, 10)}, [10]) for _ in range(3)
    ]
    stacked = torch.stack(tensordicts, 0)
    assert stacked["a"].shape == (3, 10)
    assert torch.equal(stacked["b"][1], tensordicts[1]["b"])
    stacked = stacked.contiguous()
    assert stacked.is_contiguous()


@pytest.mark.parametrize("order", [range(10), [3, 1, 9, 0, 2, 8, 4, 6, 5, 7]])
def test_lazy_preallocation(order: list[int]) -> None:
    n = 10

    def foo() -> TensorDict:
        data = TensorDict({}, batch_size=[])
        data["a"] = torch.randn(3)
        data["b"] = TensorDict({"c": torch.zeros(2)}, batch_size=[])
        return data

    tensordict = TensorDict({}, batch_size=[n])
    written = {}
    for i in order:
        value = foo()
        written[i] = value["a"]
        tensordict[i] = value
    assert tensordict["a"].shape == (n, 3)
    assert tensordict["b"].batch_size == (n,)
    assert tensordict["b", "c"].shape == (n, 2)
    for i, a in written.items():
        assert torch.equal(tensordict["a"][i], a)


# -- seed 003: project page ------------------------------------------------------------------


def test_general_batch_size_and_device() -> None:
    data = TensorDict(
        {"key 1": torch.ones(3, 4, 5), "key 2": torch.zeros(3, 4, 5, dtype=torch.bool)},
        batch_size=[3, 4],
    )
    assert data.batch_size == (3, 4)
    data = TensorDict(
        {"key 1": torch.ones(3, 4, 5), "key 2": torch.zeros(3, 4, 5, dtype=torch.bool)},
        batch_size=[3, 4],
        device="cpu",
    )
    data["key 3"] = torch.randn(3, 4, device="cpu")
    assert data["key 3"].device == torch.device("cpu")
    # Values written later move to the instance's device (meta stands in for a GPU here).
    on_meta = TensorDict({"key 1": torch.ones(3, 4)}, batch_size=[3, 4], device="meta")
    on_meta["key 3"] = torch.randn(3, 4, device="cpu")
    assert on_meta["key 1"].device.type == "meta" and on_meta["key 3"].device.type == "meta"


def test_nested_tuples_are_unravelled() -> None:
    data = TensorDict({"key 1": torch.ones(3, 4, 5)}, batch_size=[3, 4])
    data["nested", "key"] = torch.zeros(3, 4)
    data["nested", ("supernested", ("key",))] = torch.zeros(3, 4)
    assert (data["nested", "supernested", "key"] == 0).all()
    assert (("nested",), "supernested", (("key",),)) in data.keys(include_nested=True)


def test_non_tensor_data() -> None:
    data = TensorDict({"a-tensor": torch.randn(1, 2)}, batch_size=[1, 2])
    data["non-tensor"] = "a string!"
    assert data["non-tensor"] == "a string!"


def test_tensor_like_indexing_stack_cat() -> None:
    data = TensorDict(
        {"key 1": torch.ones(3, 4, 5), "key 2": torch.zeros(3, 4, 5, dtype=torch.bool)},
        batch_size=[3, 4],
    )
    sub_tensordict = data[..., :2]
    assert sub_tensordict.shape == torch.Size([3, 2])
    assert sub_tensordict["key 1"].shape == torch.Size([3, 2, 5])
    tensordicts = [
        TensorDict(
            {"key 1": torch.ones(3, 4, 5), "key 2": torch.zeros(3, 4, 5, dtype=torch.bool)},
            batch_size=[3, 4],
        )
        for _ in range(2)
    ]
    stack_tensordict = torch.stack(tensordicts, 1)
    assert stack_tensordict.shape == torch.Size([3, 2, 4])
    assert stack_tensordict["key 1"].shape == torch.Size([3, 2, 4, 5])
    cat_tensordict = torch.cat(tensordicts, 0)
    assert cat_tensordict.shape == torch.Size([6, 4])
    assert cat_tensordict["key 1"].shape == torch.Size([6, 4, 5])


def test_view_reshape_unsqueeze_print_shapes() -> None:
    data = TensorDict(
        {"key 1": torch.ones(3, 4, 5), "key 2": torch.zeros(3, 4, 5, dtype=torch.bool)},
        batch_size=[3, 4],
    )
    assert data.view(-1).batch_size == torch.Size([12])
    assert data.reshape(-1).batch_size == torch.Size([12])
    assert data.unsqueeze(-1).batch_size == torch.Size([3, 4, 1])


def test_apply_uniform_and_filter() -> None:
    data = TensorDict({"key 1": torch.ones(3, 4, 5)}, batch_size=[3, 4])
    tensordict_uniform = data.apply(lambda tensor: tensor.uniform_())
    assert ((tensordict_uniform["key 1"] >= 0) & (tensordict_uniform["key 1"] <= 1)).all()
    data = TensorDict(
        {"a": torch.tensor(1.0, dtype=torch.float), "b": torch.tensor(1, dtype=torch.int64)}, []
    )
    data_float = data.apply(lambda x: x if x.dtype == torch.float else None)
    assert "b" not in data_float
    assert "a" in data_float


def test_seed_003_lazy_preallocation_repr_shape() -> None:
    def foo() -> TensorDict:
        data = TensorDict({}, batch_size=[])
        data["a"] = torch.randn(3)
        data["b"] = TensorDict({"c": torch.zeros(2)}, batch_size=[])
        return data

    n = 10
    stacked = torch.stack([foo() for _ in range(n)])
    data = TensorDict({}, batch_size=[n])
    for i in range(n):
        data[i] = foo()
    for result in (stacked, data):
        assert result.batch_size == (10,)
        assert result["a"].shape == (10, 3) and result["a"].dtype == torch.float32
        assert result["b"].batch_size == (10,) and result["b", "c"].shape == (10, 2)


def test_nesting_and_flatten_keys() -> None:
    data = TensorDict(
        {
            "key 1": torch.ones(3, 4, 5),
            "key 2": TensorDict({"sub-key": torch.randn(3, 4, 5, 6)}, batch_size=[3, 4, 5]),
        },
        batch_size=[3, 4],
    )
    tensordict_flatten = data.flatten_keys(separator=".")
    assert set(tensordict_flatten.keys()) == {"key 1", "key 2.sub-key"}
    sub_value = data["key 2", "sub-key"]
    assert sub_value.shape == (3, 4, 5, 6)
    assert data["key 2"].batch_size == (3, 4, 5)


def test_tensorclass_seed_example() -> None:
    @tensorclass
    class MyData:
        image: torch.Tensor
        mask: torch.Tensor
        label: torch.Tensor

        def mask_image(self) -> torch.Tensor:
            return self.image[self.mask.expand_as(self.image)].view(*self.batch_size, -1)

        def select_label(self, label: int) -> "MyData":
            return self[self.label == label]

    images = torch.randn(100, 3, 64, 64)
    label = torch.randint(10, (100,))
    mask = torch.zeros(1, 64, 64, dtype=torch.bool).bernoulli_().expand(100, 1, 64, 64)
    data = MyData(images, mask, label=label, batch_size=[100])
    selected = data.select_label(1)
    count = int((label == 1).sum())
    assert isinstance(selected, MyData)
    assert selected.batch_size == (count,)
    assert selected.image.shape == (count, 3, 64, 64)
    assert selected.mask.shape == (count, 1, 64, 64)
    assert data.mask_image().shape == (100, 3 * int(mask[0].sum()))
    reshaped = data.reshape(10, 10)
    assert isinstance(reshaped, MyData)
    assert reshaped.image.shape == (10, 10, 3, 64, 64)
    assert reshaped.label.shape == (10, 10)
    text = repr(selected)
    assert text.startswith("MyData(") and f"batch_size=[{count}]" in text
    assert "image: f32[3,64,64]" in text
