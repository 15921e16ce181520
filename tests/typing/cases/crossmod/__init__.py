"""Snippets spread over modules: classes defined in one module, used in another."""
