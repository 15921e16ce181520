"""Type-checker plugins.

``tensorclass.plugins.mypy`` is the mypy plugin: enable it with
``plugins = tensorclass.plugins.mypy`` in the ``[tool.mypy]`` (or ``[mypy]``) section of
your configuration. See ``docs/typing.md``.
"""
