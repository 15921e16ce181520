"""A mypy plugin for the tests: records mypy's fullname of each ``torch`` function called in
the checked files, one ``path:line fullname`` row per call, in the file named by the
environment variable ``TENSORCLASS_FULLNAMES`` (see test_torch_function_names.py)."""

from __future__ import annotations

import os
from collections.abc import Callable

from mypy.plugin import FunctionSigContext, Plugin
from mypy.types import FunctionLike


class FullnameRecorder(Plugin):
    """Records, never changes a signature."""

    def get_function_signature_hook(
        self, fullname: str
    ) -> Callable[[FunctionSigContext], FunctionLike] | None:
        """A hook that writes the call's line and this fullname."""
        if not fullname.startswith("torch."):
            return None

        def record(ctx: FunctionSigContext) -> FunctionLike:
            with open(os.environ["TENSORCLASS_FULLNAMES"], "a", encoding="utf-8") as out:
                out.write(f"{ctx.api.path}:{ctx.context.line} {fullname}\n")
            return ctx.default_signature

        return record


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point."""
    return FullnameRecorder
