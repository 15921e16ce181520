"""The batch dims: shape operations, indexing and writes at an index.

:mod:`.batch_dims` (``reshape``, ``view``, ``permute``, ``unsqueeze``...), :mod:`.rearrange`
(``movedim``, ``rot90``, ``repeat``...), :mod:`.indexing` (``td[idx]``, ``td[idx] = v``),
:mod:`.inplace` (in-place writes that reach the members of lazy stacks, for index writes
and every in-place operation), :mod:`.jagged` (nested jagged leaves indexed and
concatenated along the batch dim), :mod:`.selection` (``gather``, ``set_at_``...),
:mod:`.context` (the ``with`` forms that write back) and :mod:`.packing` (every leaf as one
feature tensor). Builds on keys and the core.
"""
