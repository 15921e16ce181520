"""``python -m tensorclass``: the command line (see :mod:`tensorclass.cli`)."""

from .cli import entry

if __name__ == "__main__":  # importing this module (e.g. pkgutil.walk_packages) runs nothing
    raise SystemExit(entry())
