"""The versioned soul on disk: shipped versions, runtime amendments and the ACTIVE pointer.

Shipped versions live in the package (`soul/versions/soul_vN.yaml` + `ACTIVE`), which may be
read-only. Versions activated at runtime are written to the state directory (inside
LANCELOT_HOME) with their own `ACTIVE`, which wins over the shipped pointer when it exists.
A version number present in both places resolves to the state directory's file.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from pathlib import Path

from soul.atomic import write_atomic
from soul.errors import SoulError, SoulRejected
from soul.linter import lint_text
from soul.report import Finding, LintReport, Severity
from soul.schema import Soul

SHIPPED_VERSIONS_DIR = Path(__file__).resolve().parent / "versions"
POINTER = "ACTIVE"
_VERSION_FILE = re.compile(r"^soul_v([1-9][0-9]*)\.yaml$")
_POINTER_TEXT = re.compile(r"^[1-9][0-9]*$")

log = logging.getLogger(__name__)


def version_filename(version: int) -> str:
    """`soul_v3.yaml` for 3."""
    return f"soul_v{version}.yaml"


class SoulStore:
    """Reads soul versions and moves the ACTIVE pointer; `activate` is the only writer."""

    def __init__(self, versions_dir: Path, state_dir: Path) -> None:
        self._shipped = versions_dir
        self._state = state_dir
        self._fallback_reason: str | None = None

    @property
    def state_dir(self) -> Path:
        """Where runtime versions, the runtime pointer and amendments live."""
        return self._state

    @property
    def fallback_reason(self) -> str | None:
        """Why the last `load_active` did not use the state pointer, or None if it did."""
        return self._fallback_reason

    def versions(self) -> list[int]:
        """Every version number on disk, shipped or runtime, ascending."""
        found: set[int] = set()
        for directory in (self._shipped, self._state):
            if directory.is_dir():
                for path in directory.iterdir():
                    match = _VERSION_FILE.match(path.name)
                    if match:
                        found.add(int(match.group(1)))
        return sorted(found)

    def text(self, version: int) -> str:
        """The YAML text of one version; raises SoulError when it is missing or unreadable."""
        for directory in (self._state, self._shipped):
            path = directory / version_filename(version)
            if path.is_file():
                try:
                    return path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    raise SoulError(f"{path} cannot be read: {exc}") from None
        raise SoulError(f"soul version {version} does not exist")

    def report(self, version: int) -> LintReport:
        """The lint report of one stored version (what /soul can show)."""
        return _lint_version(self.text(version), version)

    def get(self, version: int) -> Soul:
        """One version, parsed and linted; raises SoulError naming the first problem."""
        report = self.report(version)
        if report.soul is None or not report.ok:
            first = report.critical[0].describe() if report.critical else "failed lint"
            raise SoulError(f"{report.source} is broken: {first}")
        return report.soul

    def active_version(self) -> int:
        """The version the pointers designate (after any fallback, see `fallback_reason`)."""
        version, reason = self._resolve_pointer()
        self._fallback_reason = reason
        if reason:
            log.warning("soul: %s", reason)
        return version

    def load_active(self) -> Soul:
        """The active soul; raises SoulError with a one-line reason if it is broken."""
        return self.get(self.active_version())

    def activate(self, version: int, *, text: str | None = None) -> Soul:
        """Make `version` active, first writing it from `text` when given (a new version).

        The soul is linted again; one that fails a CRITICAL check raises SoulRejected and the
        previous version stays active. A new version number must not exist yet.
        """
        if text is not None and version in self.versions():
            raise SoulError(f"soul version {version} already exists")
        report = _lint_version(self.text(version) if text is None else text, version)
        if report.soul is None or not report.ok:
            raise SoulRejected(report)
        if text is not None:
            write_atomic(self._state / version_filename(version), text)
        write_atomic(self._state / POINTER, f"{version}\n")
        self._fallback_reason = None
        log.info("soul: version %d is now active", version)
        return report.soul

    def _resolve_pointer(self) -> tuple[int, str | None]:
        state_pointer = self._state / POINTER
        known = self.versions()
        if state_pointer.exists():
            version, problem = _read_pointer(state_pointer, known)
            if problem is None:
                return version, None
            fallback = self._newest_valid(known)
            if fallback is None:
                raise SoulError(f"{state_pointer} {problem}, and no valid version exists")
            return fallback, f"{state_pointer} {problem}; using the newest valid v{fallback}"
        shipped_pointer = self._shipped / POINTER
        if not shipped_pointer.exists():
            raise SoulError(f"no {POINTER} pointer in {self._shipped}")
        version, problem = _read_pointer(shipped_pointer, known)
        if problem is not None:
            raise SoulError(f"{shipped_pointer} {problem}")
        return version, None

    def _newest_valid(self, known: list[int]) -> int | None:
        for version in reversed(known):
            try:
                self.get(version)
            except SoulError:
                continue
            return version
        return None


def _read_pointer(path: Path, known: list[int]) -> tuple[int, str | None]:
    """The version a pointer file names, or a problem in words."""
    try:
        content = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        return 0, f"cannot be read ({exc})"
    if not _POINTER_TEXT.match(content):
        return 0, f"does not hold a version number (found {content[:20]!r})"
    version = int(content)
    if version not in known:
        return version, f"points at version {version}, which does not exist"
    return version, None


def _lint_version(text: str, version: int) -> LintReport:
    """Lint a version's text and check that it declares the number its file name carries."""
    report = lint_text(text, version_filename(version))
    if report.soul is not None and report.soul.version != version:
        message = f"the document says version {report.soul.version}, the file is v{version}"
        finding = Finding("version-number", Severity.CRITICAL, message, "version")
        report = replace(report, findings=(*report.findings, finding))
    return report
