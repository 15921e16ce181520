"""``torch.*`` on tensor classes: ``__torch_function__`` dispatch, pytree nodes, padding.

:mod:`.functions` is the dispatch table (``torch.stack``, ``torch.cat``, ``torch.unbind``...),
:mod:`.elementwise` the ``torch.*``/``torch.nn.functional`` element-wise functions,
:mod:`.pytree` makes every tensor class a pytree node (``vmap``, ``torch.func``,
``torch.compile``), :mod:`.padding` is ``pad``/``pad_sequence``. Builds on leafwise and below.
"""
