"""``torch.vmap`` dims given the tensor-class way.

Tensor classes are pytree nodes (:mod:`.pytree`): ``vmap`` maps every leaf and the batch size
is read off the leaves, so a ``TensorDict`` of batch ``[B, 3]`` mapped over dim 0 is seen with
batch ``[3]`` inside the function, writes inside it are in the output, and the output has the
mapped dim at ``out_dims``. What pytree alone cannot say, :func:`install` adds to
``torch._functorch.vmap`` (as tensordict does), each time only when a tensor class is there:

- a negative dim counts from the end of the batch (not of each leaf);
- ``out_dims=(d,)`` for a function that returns one tensor class (as for a tensor);
- dims given as a tensor class of the same keys, one dim per key (nested levels take one
  dim for the level or a structure of their own); a key it lacks is not mapped;
- dim names: the mapped dim's name is hidden inside the function, and the output's new dim
  is unnamed;
- lazy stacks: an output dim other than 0 moves the stack dim as ``movedim`` does, and a
  lazy stack mapped along its stack dim (one member, dense, inside the function) comes back
  a lazy stack stacked at the output dim when the function returns that member;
- ``chunk_size=``: the chunks of one returned instance are joined at the same dims.

>>> import torch
>>> from tensorclass import TensorDict
>>> td = TensorDict(a=torch.zeros(4, 3), b=torch.zeros(3, 4), batch_size=[])
>>> dims = TensorDict(a=0, b=1)
>>> torch.vmap(lambda t: t["a"] + t["b"], (dims,))(td).shape
torch.Size([4, 3])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch._functorch.apis as vmap_apis
import torch._functorch.vmap as vmap_src
import torch.utils._pytree as pytree
from torch import Tensor

from ...non_tensor import NonTensorData
from ..core.self_types import as_op
from ..core.state import TensorCore
from .pytree import NodeContext, own_node

__all__ = ["install", "mark_mapped_stack"]

_installed: list[bool] = []
_functorch = torch._C._functorch
#: per vmap level: the dense members given for lazy stacks mapped along their stack dim,
#: with the lazy-stack class that stacks them again
_MAPPED: dict[int, list[tuple[TensorCore, Any]]] = {}


def mark_mapped_stack(member: TensorCore, stack_cls: Any) -> None:
    """Record that ``member`` stands, inside the current vmap level, for a lazy stack of
    class ``stack_cls`` mapped along its stack dim: returned, it is stacked again."""
    level = _functorch.maybe_current_level()
    if level is not None:
        _MAPPED.setdefault(level, []).append((member, stack_cls))


def _dim_for(dims: TensorCore, path: tuple[str, ...]) -> int | None:
    """The dim ``dims`` gives the leaf at ``path`` (a level's one dim covers its leaves)."""
    level: Any = dims
    for key in path:
        if not isinstance(level, TensorCore):
            break
        level = level._data.get(key)
        if level is None:
            return None
    if isinstance(level, NonTensorData):
        level = level.data
    if level is None or isinstance(level, TensorCore):
        return None
    if isinstance(level, Tensor):
        if level.numel() != 1 or level.is_floating_point():
            raise ValueError(f"vmap: a dim of {path!r} must be an int or None, got {level!r}")
        return int(level.item())
    if isinstance(level, int):
        return level
    raise ValueError(f"vmap: a dim of {path!r} must be an int or None, got {level!r}")


def _path_of(keys: tuple[Any, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for entry in keys:
        key = getattr(entry, "key", entry)
        out.extend(key if isinstance(key, tuple) else (key,))
    return tuple(out)


def _batch_dim(dim: int, n: int) -> int:
    """A negative ``dim`` counted from the end of a batch of ``n`` dims; other dims are the
    leaves' own."""
    return dim + n if -n <= dim < 0 else dim


def _per_leaf(dims: TensorCore, node: TensorCore) -> Any:
    """``dims`` (a tensor class of dims) as the tree pytree expects: ``node``'s structure with
    one dim (or ``None``) per leaf."""
    with_paths, spec = pytree.tree_flatten_with_path(node)
    flat = [_dim_for(dims, _path_of(keys)) for keys, _ in with_paths]
    return pytree.tree_unflatten(flat, spec)


def _resolve(dims: Any, tree: Any, extra: int) -> Any:
    """``dims`` with every part that meets a tensor class made explicit (see the module)."""
    if isinstance(tree, TensorCore):
        if isinstance(dims, tuple) and len(dims) == 1 and extra:
            dims = dims[0]  # out_dims=(d,) for one tensor class, as for one tensor
        if isinstance(dims, TensorCore):
            return _per_leaf(dims, tree)
        if isinstance(dims, int) and not isinstance(dims, bool):
            return _batch_dim(dims, len(tree._batch_size) + extra)
        return dims
    if isinstance(dims, (tuple, list)) and isinstance(tree, (tuple, list)):
        if len(dims) != len(tree):
            return dims  # torch reports the mismatch
        parts = [_resolve(d, t, extra) for d, t in zip(dims, tree)]
        return dims if _same(parts, dims) else _like(dims, parts)
    if isinstance(dims, dict) and isinstance(tree, dict) and dims.keys() == tree.keys():
        return {k: _resolve(dims[k], tree[k], extra) for k in dims}
    if isinstance(dims, int) and isinstance(tree, (tuple, list)):
        # one dim for a whole container: each tensor class in it counts its batch
        parts = [_resolve(dims, t, extra) for t in tree]
        return dims if all(p is dims for p in parts) else _like(tree, parts)
    if isinstance(dims, int) and isinstance(tree, dict):
        entries = {k: _resolve(dims, v, extra) for k, v in tree.items()}
        return dims if all(p is dims for p in entries.values()) else entries
    return dims


def _same(parts: list[Any], given: Any) -> bool:
    return all(p is g for p, g in zip(parts, given))


def _like(model: Any, parts: list[Any]) -> Any:
    """``parts`` in a container of ``model``'s type (a named tuple included)."""
    if hasattr(model, "_fields"):
        return type(model)(*parts)
    return type(model)(parts) if isinstance(model, (tuple, list)) else parts


def _has_node(tree: Any) -> bool:
    cls = tree.__class__
    if cls is Tensor:
        return False
    if cls is tuple or cls is list:
        for part in tree:
            if part.__class__ is not Tensor and _has_node(part):
                return True
        return False
    if isinstance(tree, TensorCore):
        return True
    if isinstance(tree, (tuple, list)):
        return any(_has_node(t) for t in tree)
    if isinstance(tree, dict):
        return any(_has_node(t) for t in tree.values())
    return False


def _plain(dims: Any) -> bool:
    """Whether ``dims`` means the same to pytree as to a tensor class (non-negative ints and
    ``None`` in tuples): nothing to resolve."""
    cls = dims.__class__
    if cls is int:
        return bool(dims >= 0)
    if dims is None:
        return True
    if cls is tuple:
        for part in dims:
            if not _plain(part):
                return False
        return True
    return False


def _needs_finish(output: Any) -> bool:
    """Whether an output has names or lazy stacks to see to after unwrapping."""
    if isinstance(output, TensorCore):
        return output._names is not None or own_node(output)
    if isinstance(output, (tuple, list)):
        return any(_needs_finish(o) for o in output)
    return False


def _stack_class(output: Any, mapped: list[tuple[TensorCore, Any]]) -> Any:
    for member, stack_cls in mapped:
        if member is output:
            return stack_cls
    return None


def _finish(result: Any, inner: Any, out_dims: Any, mapped: list[tuple[TensorCore, Any]]) -> Any:
    """Names, lazy stacks (see the module) of each tensor-class output; ``out_dims`` as
    resolved, with 0 for a lazy stack whose dim is moved here."""
    if isinstance(inner, TensorCore) and isinstance(result, TensorCore):
        if not isinstance(out_dims, int):
            return result
        stack_cls = _stack_class(inner, mapped) if mapped else None
        if stack_cls is not None:
            result = stack_cls._restack(list(as_op(result).unbind(out_dims)), out_dims)
        elif own_node(inner) and out_dims:
            result = as_op(result).movedim(0, out_dims)
        _restore_names(result, inner, out_dims)
        return result
    if isinstance(inner, (tuple, list)) and isinstance(result, (tuple, list)):
        parts = [
            _finish(r, i, out_dims[n] if isinstance(out_dims, (tuple, list)) else out_dims, mapped)
            for n, (r, i) in enumerate(zip(result, inner))
        ]
        return result if _same(parts, result) else _like(result, parts)
    return result


def _lazy_at_zero(out_dims: Any, outputs: Any) -> Any:
    """``out_dims`` with 0 for each lazy-stack output (its dim is moved afterwards)."""
    if own_node(outputs) and isinstance(out_dims, int):
        return 0
    if isinstance(outputs, (tuple, list)) and isinstance(out_dims, (tuple, list)):
        if len(outputs) == len(out_dims):
            parts = [_lazy_at_zero(d, o) for d, o in zip(out_dims, outputs)]
            return out_dims if _same(parts, out_dims) else _like(out_dims, parts)
    if isinstance(outputs, (tuple, list)) and isinstance(out_dims, int):
        if any(own_node(o) for o in outputs):
            return _like(outputs, [_lazy_at_zero(out_dims, o) for o in outputs])
    return out_dims


def _restore_names(outputs: Any, inner: Any, out_dims: Any) -> None:
    """Give each tensor-class output the names it had inside, ``None`` for the new dim."""
    if isinstance(outputs, TensorCore) and isinstance(inner, TensorCore):
        names = inner._names
        if names is None or not isinstance(out_dims, int):
            return
        if len(outputs._batch_size) == len(names) + 1:
            new = list(names)
            new.insert(out_dims, None)
            outputs._names = tuple(new)
        return
    if isinstance(outputs, (tuple, list)) and isinstance(inner, (tuple, list)):
        for i, (out, was) in enumerate(zip(outputs, inner)):
            dim = out_dims[i] if isinstance(out_dims, (tuple, list)) else out_dims
            _restore_names(out, was, dim)


def _wrap_check(check: Callable[..., None]) -> Callable[..., None]:
    def check_out_dims_is_int_or_int_pytree(out_dims: Any, func: Callable[..., Any]) -> None:
        if not _has_node(out_dims):  # a tensor class of dims is read when it is applied
            check(out_dims, func)

    return check_out_dims_is_int_or_int_pytree


def _wrap_process(process: Callable[..., Any]) -> Callable[..., Any]:
    def process_batched_inputs(in_dims: Any, args: Any, func: Callable[..., Any]) -> Any:
        if not _plain(in_dims) and _has_node(args):
            in_dims = _resolve(in_dims, args, 0)
        return process(in_dims, args, func)

    return process_batched_inputs


def _wrap_unwrap(unwrap: Callable[..., Any]) -> Callable[..., Any]:
    def unwrap_batched(
        batched_outputs: Any,
        out_dims: Any,
        vmap_level: int,
        batch_size: int,
        func: Callable[..., Any],
    ) -> Any:
        mapped = _MAPPED.pop(vmap_level, []) if _MAPPED else []
        if not mapped and out_dims.__class__ is int and out_dims >= 0:
            if not _needs_finish(batched_outputs):  # the common case: pytree alone
                return unwrap(batched_outputs, out_dims, vmap_level, batch_size, func)
        if not _has_node(batched_outputs):
            return unwrap(batched_outputs, out_dims, vmap_level, batch_size, func)
        resolved = _resolve(out_dims, batched_outputs, 1)
        at_zero = _lazy_at_zero(resolved, batched_outputs)
        result = unwrap(batched_outputs, at_zero, vmap_level, batch_size, func)
        return _finish(result, batched_outputs, resolved, mapped)

    return unwrap_batched


def _wrap_concat(concat: Callable[..., Any]) -> Callable[..., Any]:
    def concat_chunked_outputs(out_dims: Any, arg_spec: Any, chunks: Any) -> Any:
        # ``chunk_size=``: the chunks are joined leaf by leaf; one instance's dims as above
        if isinstance(arg_spec.type, type) and issubclass(arg_spec.type, TensorCore):
            if isinstance(out_dims, tuple) and len(out_dims) == 1:
                out_dims = out_dims[0]
            context = arg_spec.context
            if isinstance(out_dims, int) and out_dims < 0 and isinstance(context, NodeContext):
                out_dims = _batch_dim(out_dims, len(context.batch_size))
        return concat(out_dims, arg_spec, chunks)

    return concat_chunked_outputs


#: the functions of ``torch._functorch.vmap`` wrapped, and how
_WRAPS: tuple[tuple[str, Callable[[Any], Callable[..., Any]]], ...] = (
    ("_check_out_dims_is_int_or_int_pytree", _wrap_check),
    ("_process_batched_inputs", _wrap_process),
    ("_unwrap_batched", _wrap_unwrap),
    ("_concat_chunked_outputs", _wrap_concat),
)
_OURS: set[Callable[..., Any]] = set()
#: what ``torch.vmap`` calls (in ``torch._functorch.apis``; tensordict leaves it alone)
_ENTRY = "vmap_impl"


def _ensure() -> None:
    """Wrap the functions of ``torch._functorch.vmap`` that are not wrapped (again, after a
    library that patches them too, such as tensordict, was imported: its version is wrapped)."""
    if vmap_src._unwrap_batched in _OURS and vmap_src._process_batched_inputs in _OURS:
        return
    for name, wrap in _WRAPS:
        current = getattr(vmap_src, name)
        if current not in _OURS:
            ours = wrap(current)
            _OURS.add(ours)
            setattr(vmap_src, name, ours)


def install() -> None:
    """Teach ``torch.vmap`` the tensor-class dims (see the module); done once, at import.

    Each ``torch.vmap`` call first checks that the wrappers are in place."""
    if _installed:
        return
    _installed.append(True)
    _ensure()
    impl = getattr(vmap_apis, _ENTRY)

    def vmap_impl(
        func: Callable[..., Any],
        in_dims: Any,
        out_dims: Any,
        randomness: str,
        chunk_size: int | None,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        _ensure()
        return impl(func, in_dims, out_dims, randomness, chunk_size, *args, **kwargs)

    setattr(vmap_apis, _ENTRY, vmap_impl)
