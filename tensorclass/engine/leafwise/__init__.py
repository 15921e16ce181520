"""Operations that map leaves: ``apply``, element-wise maths, casts, reductions, factories.

:mod:`.table` is the leaf-op table (one line per method: ``name = kind(function)``);
:mod:`.kind`, :mod:`.elementwise_kinds` and :mod:`.reduction_kinds` say what each kind of
entry is (its typed signature, written once, and how it runs); :mod:`.apply` is
``apply``/``to``/``clone``/``where``...; :mod:`.arithmetic`, :mod:`.elementwise` and
:mod:`.reductions` run the entries leaf by leaf;
:mod:`.tensor_state` (``copy_``, ``requires_grad``...), :mod:`.factories` (``new_*``),
:mod:`.masks` (a batch mask checked before any leaf is touched) and :mod:`.comparing`
(``assert_close``). Builds on shape, keys and the core.
"""
