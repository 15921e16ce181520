"""Parameters of ``torch.nn`` modules as tensor classes, and back.

:mod:`.extract` (``from_module``, ``from_modules``), :mod:`.building` (the class methods that
build from modules), :mod:`.to_module` (loading parameters into a module, with the swap it
returns) and :mod:`.state_dict` (``state_dict``/``load_state_dict``). Builds on build and below.
"""
