"""Building instances from data and turning them back into plain Python.

:mod:`.instances` (mappings, lists, other instances: the batch-size rule),
:mod:`.from_containers` and :mod:`.entries` (tuples, named tuples, dataclasses, pytrees),
:mod:`.pytrees`, :mod:`.struct_array` (NumPy structured arrays), :mod:`.conversion`
(``to_dict``, ``tolist``, ``numpy``) and :mod:`.parse_repr`. Builds on torch_api and below.
"""
