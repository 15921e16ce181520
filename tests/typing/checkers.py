"""Run mypy (with and without the plugin) and basedpyright on snippet files; read markers.

A snippet file starts with ``# checkers: plugin mypy pyright`` (any of the three):

- ``plugin``: mypy with ``plugins = tensorclass.plugins.mypy``;
- ``mypy``: plain mypy, no plugin;
- ``pyright``: basedpyright in ``standard`` mode.

A line that must have an error carries a marker comment ``# E: code ...``; the marker
``# E[plugin,mypy]: code`` applies to the named checkers only. Codes starting with
``report`` are pyright rules, the others mypy error codes; with no code for a checker,
any error counts. Every other line must have no error. mypy runs with the package's own
strict settings, so an ``Any`` that leaks into an annotated name is an error too.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from mypy import api as mypy_api

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CASES = HERE / "cases"
DOCS_PAGE = REPO / "docs" / "typing.md"
CHECKERS = ("plugin", "mypy", "pyright")

_MARKER = re.compile(r"^E(?:\[(?P<only>[a-z,]+)\])?(?::(?P<codes>[\w\- ]*))?$")
_MYPY_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+): (?P<level>error|note): (?P<msg>.*)$")
_MYPY_CODE = re.compile(r"\s+\[(?P<code>[\w\-]+)\]$")
_FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Diagnostic:
    """One error reported by a checker."""

    path: Path
    line: int
    code: str
    message: str


@dataclass
class Expectations:
    """What one snippet file expects: its checkers and its marked lines."""

    checkers: tuple[str, ...]
    #: (checker, line) -> accepted codes (empty: any error)
    errors: dict[tuple[str, int], set[str]]


def parse_expectations(path: Path) -> Expectations:
    """Read the ``# checkers:`` header and the ``# E`` markers of a snippet file."""
    lines = path.read_text().splitlines()
    header = lines[0] if lines else ""
    if not header.startswith("# checkers:"):
        raise ValueError(f"{path}: the first line must be '# checkers: ...'")
    checkers = tuple(header.split(":", 1)[1].split())
    unknown = set(checkers) - set(CHECKERS)
    if unknown:
        raise ValueError(f"{path}: unknown checkers {sorted(unknown)}")
    errors: dict[tuple[str, int], set[str]] = {}
    for number, text in enumerate(lines, 1):
        if number == 1 or "#" not in text:
            continue
        for part in text.split("#")[1:]:
            match = _MARKER.match(part.strip())
            if match is None:
                continue
            only = match["only"].split(",") if match["only"] else checkers
            codes = (match["codes"] or "").split()
            for checker in only:
                if checker not in checkers:
                    raise ValueError(f"{path}:{number}: marker for a checker not in the header")
                wanted = [c for c in codes if c.startswith("report") == (checker == "pyright")]
                errors.setdefault((checker, number), set()).update(wanted)
    return Expectations(checkers, errors)


def compare(path: Path, expected: Expectations, checker: str, found: list[Diagnostic]) -> list[str]:
    """The differences between a file's markers and one checker's errors (empty: all good)."""
    by_line: dict[int, list[Diagnostic]] = defaultdict(list)
    for diagnostic in found:
        if diagnostic.path == path:
            by_line[diagnostic.line].append(diagnostic)
    problems = []
    for (name, line), codes in sorted(expected.errors.items()):
        if name != checker:
            continue
        got = by_line.pop(line, [])
        if not got:
            problems.append(f"{path.name}:{line}: expected an error ({' '.join(codes) or 'any'})")
        elif codes and not any(d.code in codes for d in got):
            shown = "; ".join(f"[{d.code}] {d.message}" for d in got)
            problems.append(f"{path.name}:{line}: expected {sorted(codes)}, got {shown}")
    for line, got in sorted(by_line.items()):
        for d in got:
            problems.append(f"{path.name}:{line}: unexpected error [{d.code}] {d.message}")
    return problems


# -- where things live ---------------------------------------------------------------------


def state_dir() -> Path:
    """A per-checkout directory for the mypy caches (kept between runs: warm runs are fast)."""
    tag = hashlib.sha256(str(REPO).encode()).hexdigest()[:12]
    path = Path(tempfile.gettempdir()) / f"tensorclass-typing-{tag}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def docs_snippet() -> Path:
    """The python blocks of ``docs/typing.md`` as one snippet file (checked with the plugin).

    The page's ``# E: code`` comments are markers like in the snippet files. The file is only
    rewritten when the page changed, so mypy's cache stays warm.
    """
    blocks = _FENCE.findall(DOCS_PAGE.read_text(encoding="utf-8"))
    text = "# checkers: plugin\n" + "\n".join(blocks)
    path = state_dir() / "docs" / "typing_md.py"
    path.parent.mkdir(exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path


# -- mypy ------------------------------------------------------------------------------------


def mypy_config(workdir: Path, root: Path, plugin: bool) -> Path:
    """A config with the package's strict settings (and the plugin when asked)."""
    lines = [
        "[mypy]",
        "strict = True",
        "warn_unreachable = True",
        f"mypy_path = {root}:{CASES}",
        "explicit_package_bases = True",
        "show_error_codes = True",
    ]
    if plugin:
        lines.append("plugins = tensorclass.plugins.mypy")
    path = workdir / ("mypy-plugin.ini" if plugin else "mypy-plain.ini")
    path.write_text("\n".join(lines) + "\n")
    return path


def run_mypy(
    files: list[Path],
    config: Path,
    cache: Path,
    extra: tuple[str, ...] = (),
    allow_log: bool = False,
) -> tuple[list[Diagnostic], str]:
    """Run mypy in-process (``mypy.api``): its errors, and its output (with its log, that
    ``--verbose`` writes to stderr, when ``allow_log``)."""
    args = [
        "--config-file",
        str(config),
        "--cache-dir",
        str(cache),
        "--show-absolute-path",
        "--no-error-summary",
        "--no-pretty",
        *extra,
        *map(str, files),
    ]
    stdout, stderr, status = mypy_api.run(args)
    if status not in (0, 1) or (stderr.strip() and not allow_log):
        raise RuntimeError(f"mypy failed ({status}):\n{stderr}\n{stdout}")
    return parse_mypy(stdout), stdout + stderr


def parse_mypy(output: str) -> list[Diagnostic]:
    """The errors of mypy's output (notes are dropped)."""
    found = []
    for text in output.splitlines():
        match = _MYPY_LINE.match(text)
        if match is None or match["level"] != "error":
            continue
        message = match["msg"]
        code_match = _MYPY_CODE.search(message)
        code = code_match["code"] if code_match else ""
        if code_match:
            message = message[: code_match.start()]
        found.append(Diagnostic(Path(match["path"]).resolve(), int(match["line"]), code, message))
    return found


# -- basedpyright ----------------------------------------------------------------------------


def pyright_command() -> list[str] | None:
    """How to run basedpyright, or ``None`` if it is not installed."""
    try:
        import basedpyright  # noqa: F401
    except ImportError:
        exe = shutil.which("basedpyright")
        return [exe] if exe else None
    return [sys.executable, "-m", "basedpyright"]


def run_pyright(files: list[Path], workdir: Path, root: Path) -> list[Diagnostic]:
    """Run basedpyright (``standard`` mode) on ``files``; its errors."""
    command = pyright_command()
    if command is None:
        raise RuntimeError("basedpyright is not installed")
    config = {
        "typeCheckingMode": "standard",
        "extraPaths": [str(root), str(CASES)],
        "reportMissingModuleSource": False,
    }
    (workdir / "pyrightconfig.json").write_text(json.dumps(config))
    result = subprocess.run(
        [
            *command,
            "--outputjson",
            "--pythonpath",
            sys.executable,
            "--project",
            str(workdir / "pyrightconfig.json"),
            *map(str, files),
        ],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"basedpyright failed:\n{result.stdout}\n{result.stderr}") from None
    found = []
    for diagnostic in report.get("generalDiagnostics", []):
        if diagnostic.get("severity") != "error":
            continue
        found.append(
            Diagnostic(
                Path(diagnostic["file"]).resolve(),
                diagnostic["range"]["start"]["line"] + 1,
                diagnostic.get("rule", ""),
                diagnostic["message"],
            )
        )
    return found
