"""``TensorOps``: every operation of the engine, attached in one place.

Each operation is a function in the folder of its concept (``keys/``, ``shape/``,
``leafwise/``, ``build/``, ``params/``), typed ``self: E``; the class body below attaches
them, one line each, grouped by folder and module (``permute = context.permute``), and adds
the protocol methods: ``__torch_function__``, ``repr``, ``len``, iteration and pickling. The
leaf-op table's entries are attached last. :class:`~tensorclass.engine.base.TensorDictBase`
attaches the storage operations on top, and lazy stacks derive from it.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import torch
from typing_extensions import Self

from .build import conversion, instances
from .build import from_containers as containers
from .build.printing import format_instance, html_instance
from .core.attach import class_op, op_property
from .core.safe_globals import allow_loading
from .core.state import Names, TensorCore
from .keys import access, dim_names, structure
from .leafwise import apply as applying
from .leafwise import arithmetic, elementwise, factories, tensor_state
from .leafwise.table import LeafOps
from .params import building as module_building
from .params import extract as module_params
from .params import state_dict as checkpoint
from .params import to_module as functional_params
from .shape import batch_dims, context, indexing, packing, rearrange, selection
from .torch_api import functions as torch_functions
from .torch_api.functions import HANDLED_FUNCTIONS
from .torch_api.pytree import register_pytree
from .torch_api.vmap import install as install_vmap_dims

install_vmap_dims()  # torch.vmap counts a tensor class's dims in its batch

if TYPE_CHECKING:
    pass

__all__ = ["TensorOps"]


def _rebuild(
    cls: type[TensorOps],
    data: dict[str, object],
    batch_size: torch.Size,
    device: torch.device | None,
    names: Names,
    locked: bool,
) -> TensorOps:
    obj = cls._new(data, batch_size, device, names)
    if locked:
        obj.lock_()
    return obj


class TensorOps(
    TensorCore,
):
    """The operations shared by :class:`TensorDict`, every tensor class and lazy stacks.

    An instance is a dict of leaves (tensors, nested instances, non-tensor values) whose
    leading dims all equal :attr:`batch_size`; it behaves like one tensor of that shape.
    """

    __slots__ = ()

    # The operations, attached by folder, one line each (``name = module.function``).

    # keys/
    # keys/access.py (flatten_keys, unflatten_keys: shape/context.py's ContextOps wraps them)
    get = access.get
    __contains__ = access.__contains__
    keys = access.keys
    values = access.values
    items = access.items
    is_empty = access.is_empty
    set = access.set
    set_ = access.set_
    setdefault = access.setdefault
    update = access.update
    update_ = access.update_
    pop = access.pop
    del_ = access.del_
    __delitem__ = access.__delitem__
    rename_key_ = access.rename_key_
    select = access.select
    exclude = access.exclude
    empty = access.empty
    filter_non_tensor_data = access.filter_non_tensor_data
    # keys/dim_names.py
    refine_names = dim_names.refine_names
    rename = dim_names.rename
    rename_ = dim_names.rename_
    # keys/structure.py
    clear = structure.clear
    popitem = structure.popitem
    filter_empty_ = structure.filter_empty_
    separates = structure.separates
    split_keys = structure.split_keys
    rename_keys = structure.rename_keys
    replace = structure.replace
    create_nested = structure.create_nested
    sorted_keys = op_property(structure.sorted_keys)
    depth = op_property(structure.depth)
    entry_class = structure.entry_class
    is_non_tensor = structure.is_non_tensor
    non_tensor_items = structure.non_tensor_items
    get_non_tensor = structure.get_non_tensor
    set_non_tensor = structure.set_non_tensor
    param_count = structure.param_count
    auto_device_ = structure.auto_device_
    clear_device_ = structure.clear_device_

    # shape/
    # batch_dims.py (its view, permute... are called by the context.py ones below)
    reshape = batch_dims.reshape
    expand = batch_dims.expand
    expand_as = batch_dims.expand_as
    repeat = batch_dims.repeat
    flip = batch_dims.flip
    roll = batch_dims.roll
    unbind = batch_dims.unbind
    split = batch_dims.split
    chunk = batch_dims.chunk
    set_batch_size = batch_dims.set_batch_size
    _split_sections = batch_dims._split_sections
    # context.py
    _remember = context._remember
    __enter__ = context.__enter__
    __exit__ = context.__exit__
    clear_refs_for_compile_ = context.clear_refs_for_compile_
    lock_ = context.lock_
    unlock_ = context.unlock_
    flatten_keys = context.flatten_keys
    unflatten_keys = context.unflatten_keys
    permute = context.permute
    transpose = context.transpose
    unsqueeze = context.unsqueeze
    squeeze = context.squeeze
    view = context.view
    flatten = context.flatten
    unflatten = context.unflatten
    # indexing.py
    __getitem__ = indexing.__getitem__
    __getitems__ = indexing.__getitems__
    __setitem__ = indexing.__setitem__
    _index = indexing._index
    _set_at = indexing._set_at
    # packing.py
    pack = packing.pack
    # rearrange.py
    movedim = rearrange.movedim
    moveaxis = rearrange.moveaxis
    swapaxes = rearrange.swapaxes
    swapdims = rearrange.swapdims
    rot90 = rearrange.rot90
    fliplr = rearrange.fliplr
    flipud = rearrange.flipud
    atleast_1d = rearrange.atleast_1d
    atleast_2d = rearrange.atleast_2d
    atleast_3d = rearrange.atleast_3d
    broadcast_to = rearrange.broadcast_to
    pad = rearrange.pad
    to_padded_tensor = rearrange.to_padded_tensor
    tile = rearrange.tile
    repeat_interleave = rearrange.repeat_interleave
    # selection.py
    gather = selection.gather
    masked_select = selection.masked_select
    narrow = selection.narrow
    tensor_split = selection.tensor_split
    get_at = selection.get_at
    set_at_ = selection.set_at_
    update_at_ = selection.update_at_
    copy_at_ = selection.copy_at_
    get_item_shape = selection.get_item_shape

    # leafwise/
    # (leafwise/table.py's entries are attached at the end of the class body)

    # leafwise/apply.py
    _map_tensors = applying._map_tensors
    apply = applying.apply
    named_apply = applying.named_apply
    _apply = applying._apply
    apply_ = applying.apply_
    clone = applying.clone
    __copy__ = applying.__copy__
    __deepcopy__ = applying.__deepcopy__
    _consolidated_to = applying._consolidated_to
    to = applying.to
    cpu = applying.cpu
    cuda = applying.cuda
    detach = applying.detach
    detach_ = applying.detach_
    requires_grad_ = applying.requires_grad_
    requires_grad = op_property(applying.requires_grad)
    contiguous = applying.contiguous
    is_contiguous = applying.is_contiguous
    zero_ = applying.zero_
    fill_ = applying.fill_
    masked_fill = applying.masked_fill
    masked_fill_ = applying.masked_fill_
    where = applying.where

    # leafwise/arithmetic.py
    # NumPy scalars and arrays defer to our reflected operators (np.float32(2) * td).
    __array_ufunc__ = None
    _binary = arithmetic._binary
    _inplace = arithmetic._inplace
    __add__ = arithmetic.__add__
    __radd__ = arithmetic.__radd__
    __iadd__ = arithmetic.__iadd__
    __sub__ = arithmetic.__sub__
    __rsub__ = arithmetic.__rsub__
    __isub__ = arithmetic.__isub__
    __mul__ = arithmetic.__mul__
    __rmul__ = arithmetic.__rmul__
    __imul__ = arithmetic.__imul__
    __truediv__ = arithmetic.__truediv__
    __rtruediv__ = arithmetic.__rtruediv__
    __itruediv__ = arithmetic.__itruediv__
    __floordiv__ = arithmetic.__floordiv__
    __rfloordiv__ = arithmetic.__rfloordiv__
    __ifloordiv__ = arithmetic.__ifloordiv__
    __mod__ = arithmetic.__mod__
    __rmod__ = arithmetic.__rmod__
    __imod__ = arithmetic.__imod__
    __pow__ = arithmetic.__pow__
    __rpow__ = arithmetic.__rpow__
    __ipow__ = arithmetic.__ipow__
    __and__ = arithmetic.__and__
    __rand__ = arithmetic.__rand__
    __iand__ = arithmetic.__iand__
    __or__ = arithmetic.__or__
    __ror__ = arithmetic.__ror__
    __ior__ = arithmetic.__ior__
    __xor__ = arithmetic.__xor__
    __rxor__ = arithmetic.__rxor__
    __ixor__ = arithmetic.__ixor__

    # (methods here: pyright types an operator assigned in a class body as object's)
    def __eq__(self, other: object) -> Self:  # type: ignore[override]
        return self._binary(operator.eq, other)

    def __ne__(self, other: object) -> Self:  # type: ignore[override]
        return self._binary(operator.ne, other)

    __lt__ = arithmetic.__lt__
    __le__ = arithmetic.__le__
    __gt__ = arithmetic.__gt__
    __ge__ = arithmetic.__ge__
    __hash__ = None  # type: ignore[assignment]
    __neg__ = arithmetic.__neg__
    __pos__ = arithmetic.__pos__
    __abs__ = arithmetic.__abs__
    __invert__ = arithmetic.__invert__
    lerp_ = arithmetic.lerp_
    _reduce = arithmetic._reduce
    all = arithmetic.all
    any = arithmetic.any

    # leafwise/elementwise.py
    _nary = elementwise._nary
    _nary_inplace = elementwise._nary_inplace
    _cast_leaves = elementwise._cast_leaves
    dtype = op_property(elementwise.dtype)
    bytes = elementwise.bytes
    clamp = elementwise.clamp
    clamp_ = elementwise.clamp_

    # leafwise/factories.py
    new_zeros = factories.new_zeros
    new_ones = factories.new_ones
    new_empty = factories.new_empty
    new_full = factories.new_full
    new_tensor = factories.new_tensor
    stack_tensors = factories.stack_tensors
    cat_tensors = factories.cat_tensors
    stack_from_tensordict = factories.stack_from_tensordict
    cat_from_tensordict = factories.cat_from_tensordict

    # leafwise/tensor_state.py
    copy_ = tensor_state.copy_
    copy = tensor_state.copy
    if TYPE_CHECKING:
        # For type checkers an attribute: a typed class may declare a field named "data"
        # (a field overriding a property is an error to them, not to Python).
        data: Any
        """The tensors detached from autograd, sharing their storage (as ``Tensor.data``),
        in an instance of the same class. A typed class may declare a field named ``data``,
        which then hides this property on that class."""
    else:
        data = op_property(tensor_state.data)
    grad = op_property(tensor_state.grad)
    zero_grad = tensor_state.zero_grad
    backward = tensor_state.backward
    data_ptr = tensor_state.data_ptr
    pin_memory = tensor_state.pin_memory
    pin_memory_ = tensor_state.pin_memory_
    record_stream = tensor_state.record_stream
    is_floating_point = tensor_state.is_floating_point
    is_cpu = op_property(tensor_state.is_cpu)
    is_cuda = op_property(tensor_state.is_cuda)
    is_meta = op_property(tensor_state.is_meta)

    # build/ and params/

    # build/conversion.py
    attrs = conversion.attrs
    as_tensor = conversion.as_tensor
    to_dict = conversion.to_dict
    tolist = conversion.tolist
    numpy = conversion.numpy

    # build/instances.py
    #: what ``from_list`` builds by default: ``None`` a dense stack when the elements have
    #: the same structure (lazy otherwise); a lazy-stack class sets ``True``
    _lazy_default: ClassVar[bool | None] = None

    @classmethod
    def _dense_class(cls) -> type[Self]:
        """The class the constructors build: the class itself (a lazy-stack class answers
        its members' class)."""
        return cls

    auto_batch_size_ = instances.auto_batch_size_
    from_dict = class_op(instances.from_dict)
    from_dict_instance = instances.from_dict_instance
    from_list = class_op(instances.from_list)
    fromkeys = class_op(instances.fromkeys)
    from_schema = class_op(instances.from_schema)
    from_tensordict = class_op(instances.from_tensordict)
    stack = staticmethod(torch_functions.stack)
    cat = staticmethod(torch_functions.cat)
    lazy_stack = staticmethod(instances.lazy_stack)
    maybe_dense_stack = staticmethod(instances.maybe_dense_stack)

    # build/from_containers.py
    from_tuple = class_op(containers.from_tuple)
    from_namedtuple = class_op(containers.from_namedtuple)
    from_pytree = class_op(containers.from_pytree)
    to_pytree = containers.to_pytree
    from_struct_array = class_op(containers.from_struct_array)
    to_struct_array = containers.to_struct_array
    to_namedtuple = containers.to_namedtuple

    # build/from_containers.py, params/building.py: the class methods with overloads, typed
    # by their signature kind (a Protocol bound to the class: ``Sub.from_module(m)`` is a
    # ``Sub``); at run time the class methods of those functions
    if TYPE_CHECKING:
        from_dataclass: ClassVar[containers.FromDataclass[Self]]
        from_any: ClassVar[containers.FromAny[Self]]
        from_module: ClassVar[module_params.FromModule[Self]]
        from_modules: ClassVar[module_params.FromModules[Self, Self]]
    else:
        from_dataclass = class_op(containers.from_dataclass)
        from_any = class_op(containers.from_any)
        from_module = class_op(module_building.from_module)
        from_modules = class_op(module_building.from_modules)

    # params/state_dict.py
    state_dict = checkpoint.state_dict
    load_state_dict = checkpoint.load_state_dict

    # params/to_module.py
    to_module = functional_params.to_module

    # The protocol methods.

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        register_pytree(cls)  # every tensor class is a pytree node (vmap, torch.func)
        if not cls.__name__.startswith("_"):  # internal layouts (_Blank) stay unloadable
            allow_loading(cls)  # torch.load(weights_only=True) may rebuild it

    @classmethod
    def __torch_function__(
        cls,
        func: Callable[..., Any],
        types: tuple[type, ...],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> object:
        impl = HANDLED_FUNCTIONS.get(func)
        if impl is None:
            return NotImplemented
        return impl(*args, **(kwargs or {}))

    def __repr__(self) -> str:
        return format_instance(self)

    def _repr_html_(self) -> str | None:
        """What a notebook shows: the entries as a tree, as tensordict's display."""
        return html_instance(self)

    def __len__(self) -> int:
        """The size of the first batch dim (0 without batch dims), as for tensors."""
        batch_size = self._batch_size
        return batch_size[0] if batch_size else 0

    def __iter__(self) -> Iterator[Self]:
        """Iterate over the first batch dim (as for tensors); use :meth:`keys` for keys."""
        if not self._batch_size:
            raise TypeError(f"iteration over a {type(self).__name__} with no batch dims")
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        raise RuntimeError(
            f"the truth value of a {type(self).__name__} is ambiguous: use .all() or .any() "
            f"on a comparison, or .is_empty() to test for leaves"
        )

    def _consolidated_reduce(self) -> tuple[object, ...] | None:
        """The one-buffer pickle of a consolidated instance (``None``: pickle the leaves);
        see :mod:`.consolidate`."""
        return None

    def __reduce__(self) -> tuple[object, ...]:
        packed = self._consolidated_reduce()
        if packed is not None:
            return packed
        return (
            _rebuild,
            (type(self), self._data, self._batch_size, self._device, self._names, self._locked),
        )

    # leafwise/table.py: the leaf-wise table, attached last (its names float, int, bool and
    # type shadow the builtins in the rest of the class body)
    abs = LeafOps.abs
    neg = LeafOps.neg
    exp = LeafOps.exp
    log = LeafOps.log
    sqrt = LeafOps.sqrt
    sigmoid = LeafOps.sigmoid
    tanh = LeafOps.tanh
    expm1 = LeafOps.expm1
    log1p = LeafOps.log1p
    log2 = LeafOps.log2
    log10 = LeafOps.log10
    rsqrt = LeafOps.rsqrt
    sin = LeafOps.sin
    cos = LeafOps.cos
    tan = LeafOps.tan
    sinh = LeafOps.sinh
    cosh = LeafOps.cosh
    asin = LeafOps.asin
    acos = LeafOps.acos
    atan = LeafOps.atan
    erf = LeafOps.erf
    erfc = LeafOps.erfc
    lgamma = LeafOps.lgamma
    floor = LeafOps.floor
    ceil = LeafOps.ceil
    round = LeafOps.round
    trunc = LeafOps.trunc
    frac = LeafOps.frac
    sign = LeafOps.sign
    reciprocal = LeafOps.reciprocal
    logical_not = LeafOps.logical_not
    bitwise_not = LeafOps.bitwise_not
    isnan = LeafOps.isnan
    isfinite = LeafOps.isfinite
    isposinf = LeafOps.isposinf
    isneginf = LeafOps.isneginf
    isreal = LeafOps.isreal
    nan_to_num = LeafOps.nan_to_num
    abs_ = LeafOps.abs_
    neg_ = LeafOps.neg_
    exp_ = LeafOps.exp_
    log_ = LeafOps.log_
    sqrt_ = LeafOps.sqrt_
    sigmoid_ = LeafOps.sigmoid_
    tanh_ = LeafOps.tanh_
    expm1_ = LeafOps.expm1_
    log1p_ = LeafOps.log1p_
    log2_ = LeafOps.log2_
    log10_ = LeafOps.log10_
    rsqrt_ = LeafOps.rsqrt_
    sin_ = LeafOps.sin_
    cos_ = LeafOps.cos_
    tan_ = LeafOps.tan_
    sinh_ = LeafOps.sinh_
    cosh_ = LeafOps.cosh_
    asin_ = LeafOps.asin_
    acos_ = LeafOps.acos_
    atan_ = LeafOps.atan_
    erf_ = LeafOps.erf_
    erfc_ = LeafOps.erfc_
    lgamma_ = LeafOps.lgamma_
    floor_ = LeafOps.floor_
    ceil_ = LeafOps.ceil_
    round_ = LeafOps.round_
    trunc_ = LeafOps.trunc_
    frac_ = LeafOps.frac_
    sign_ = LeafOps.sign_
    reciprocal_ = LeafOps.reciprocal_
    logical_not_ = LeafOps.logical_not_
    bitwise_not_ = LeafOps.bitwise_not_
    nan_to_num_ = LeafOps.nan_to_num_
    add = LeafOps.add
    add_ = LeafOps.add_
    sub = LeafOps.sub
    sub_ = LeafOps.sub_
    mul = LeafOps.mul
    mul_ = LeafOps.mul_
    div = LeafOps.div
    div_ = LeafOps.div_
    pow = LeafOps.pow
    pow_ = LeafOps.pow_
    rsub = LeafOps.rsub
    mod = LeafOps.mod
    maximum = LeafOps.maximum
    maximum_ = LeafOps.maximum_
    minimum = LeafOps.minimum
    minimum_ = LeafOps.minimum_
    clamp_min = LeafOps.clamp_min
    clamp_min_ = LeafOps.clamp_min_
    clamp_max = LeafOps.clamp_max
    clamp_max_ = LeafOps.clamp_max_
    logical_and = LeafOps.logical_and
    logical_and_ = LeafOps.logical_and_
    logical_or = LeafOps.logical_or
    logical_or_ = LeafOps.logical_or_
    logical_xor = LeafOps.logical_xor
    logical_xor_ = LeafOps.logical_xor_
    bitwise_and = LeafOps.bitwise_and
    bitwise_and_ = LeafOps.bitwise_and_
    bitwise_or = LeafOps.bitwise_or
    bitwise_or_ = LeafOps.bitwise_or_
    bitwise_xor = LeafOps.bitwise_xor
    bitwise_xor_ = LeafOps.bitwise_xor_
    addcmul = LeafOps.addcmul
    addcmul_ = LeafOps.addcmul_
    addcdiv = LeafOps.addcdiv
    addcdiv_ = LeafOps.addcdiv_
    lerp = LeafOps.lerp
    sum = LeafOps.sum
    mean = LeafOps.mean
    prod = LeafOps.prod
    std = LeafOps.std
    var = LeafOps.var
    amax = LeafOps.amax
    amin = LeafOps.amin
    nansum = LeafOps.nansum
    nanmean = LeafOps.nanmean
    max = LeafOps.max
    min = LeafOps.min
    quantile = LeafOps.quantile
    logsumexp = LeafOps.logsumexp
    norm = LeafOps.norm
    cumsum = LeafOps.cumsum
    cumprod = LeafOps.cumprod
    softmax = LeafOps.softmax
    log_softmax = LeafOps.log_softmax
    cummax = LeafOps.cummax
    cummin = LeafOps.cummin
    float = LeafOps.float
    double = LeafOps.double
    half = LeafOps.half
    bfloat16 = LeafOps.bfloat16
    int = LeafOps.int
    long = LeafOps.long
    bool = LeafOps.bool
    float16 = LeafOps.float16
    float32 = LeafOps.float32
    float64 = LeafOps.float64
    int8 = LeafOps.int8
    int16 = LeafOps.int16
    int32 = LeafOps.int32
    int64 = LeafOps.int64
    uint8 = LeafOps.uint8
    uint16 = LeafOps.uint16
    uint32 = LeafOps.uint32
    uint64 = LeafOps.uint64
    complex32 = LeafOps.complex32
    complex64 = LeafOps.complex64
    complex128 = LeafOps.complex128
    qint8 = LeafOps.qint8
    qint32 = LeafOps.qint32
    quint8 = LeafOps.quint8
    quint4x2 = LeafOps.quint4x2
    type = LeafOps.type


allow_loading(_rebuild)
