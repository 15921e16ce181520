"""A class whose operations are module-level functions attached in its body (the engine's
form): ``tests/docs/test_attached_ops.py`` checks the API reference shows them as methods."""
