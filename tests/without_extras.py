"""A pytest plugin that runs the suite as on a machine without the ``formats`` extra: its
packages cannot be imported (CI runs the suite both ways).

    PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest -x -q -p tests.without_extras

(Plugin autoloading is off because some extras register pytest plugins of their own.)
"""

from __future__ import annotations

import sys

from tests.docs.extras import OPTIONAL_EXTRAS

for _package in OPTIONAL_EXTRAS:
    sys.modules[_package] = None  # type: ignore[assignment]  # what the import system reads as "not installed"
