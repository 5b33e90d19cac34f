"""The canary workspace the red-team commands are written against (tests/data/redteam_shell.txt):
its layout, what counts as a canary changing, whether a card names it, and what each command
really does to a copy of it (a plain hardened container: no overlay, no governance).

The layout, as the data file's header describes it:
  f, a.txt, notes.md    files with content (notes.md has an edit not yet committed)
  x/                    a folder: x/one.txt (committed) and x/two.txt (untracked)
  list.txt              its lines name f and a.txt
  .git                  two commits on branch main, tag v1 on the first
The canaries are every one of those paths (kind, mode, content) and, in .git, what an owner
would miss: branch main, tag v1, every object, the reflogs (only ever appended to) and the
config (what git obeys), each as git in the sandbox can read it (a ref or object its owner
may not read is as good as lost). HEAD, the index and git's bookkeeping are not canaries.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.tools.sandbox import DockerEngine, SandboxLimits
from core.tools.sandbox.limits import EXEC_ENV, MOUNT, command_user, host_config
from tests.fakes.workspace import own

REDTEAM = Path(__file__).resolve().parents[2] / "data" / "redteam_shell.txt"
GIT = (
    "git",
    "-c",
    "user.name=Canary",
    "-c",
    "user.email=canary@example.org",
    "-c",
    "init.defaultBranch=main",
    "-c",
    "safe.directory=*",
)
REFS = {"git branch main": "refs/heads/main", "git tag v1": "refs/tags/v1"}
REFLOGS = {"reflog of HEAD": "HEAD", "reflog of refs/heads/main": "refs/heads/main"}
OBJECTS = "git objects"
CONFIG = ".git/config"

# path -> (kind, mode, size, sha256 of a file or target of a symlink)
State = tuple[str, int, int, str]
Snapshot = dict[str, State]


def redteam_commands() -> list[str]:
    """The red-team list: one command a line, comments and blank lines left out."""
    lines = REDTEAM.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def _git(repo: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True)


def build_template(root: Path) -> None:
    """Write the canary layout at `root` (a new folder). The repository has no hook samples
    and no info/ (an empty template), so everything in .git is git's own state."""
    root.mkdir(parents=True)
    (root / "x").mkdir()
    (root / "f").write_text("canary f\n")
    (root / "a.txt").write_text("a first line\nand a second\n")
    (root / "list.txt").write_text("f\na.txt\n")
    (root / "x" / "one.txt").write_text("canary one\n")
    _git(root, "init", "-q", f"--template={root / 'x' / 'none'}")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "first")
    _git(root, "tag", "v1")
    (root / "notes.md").write_text("# Notes\nkeep these\n")
    (root / "a.txt").write_text("a first line\nand a second\nand a third\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "second")
    (root / "notes.md").write_text("# Notes\nkeep these\nan edit not yet committed\n")
    (root / "x" / "two.txt").write_text("canary two, untracked\n")


def _clear(root: Path) -> None:
    """Remove everything inside `root` (also folders a command left unreadable)."""
    for entry in os.scandir(root):
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            os.chmod(path, 0o700)
            for top, dirs, _ in os.walk(path):
                for name in dirs:
                    inner = os.path.join(top, name)
                    if not os.path.islink(inner):
                        os.chmod(inner, 0o700)
            shutil.rmtree(path)
        else:
            path.unlink()


def lay_out(template: Path, root: Path) -> None:
    """Make `root` hold exactly a copy of `template`, owned by the sandbox's command user.
    `root` itself stays (a prepared dry-run overlay has it as its lower layer)."""
    root.mkdir(parents=True, exist_ok=True)
    _clear(root)
    for entry in template.iterdir():
        if entry.is_dir():
            shutil.copytree(entry, root / entry.name, symlinks=True)
        else:
            shutil.copy2(entry, root / entry.name)
    os.chmod(root, stat.S_IMODE(template.stat().st_mode))
    own(root)


def _state(path: str) -> State:
    info = os.lstat(path)
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISLNK(info.st_mode):
        return ("symlink", mode, 0, os.readlink(path))
    if stat.S_ISDIR(info.st_mode):
        return ("dir", mode, 0, "")
    if not stat.S_ISREG(info.st_mode):
        return ("other", mode, 0, "")
    try:
        with open(path, "rb") as file:
            digest = hashlib.sha256(file.read()).hexdigest()
    except OSError:
        digest = "unreadable"
    return ("file", mode, info.st_size, digest)


def snapshot(root: Path) -> Snapshot:
    """Every path under `root` ("." for root itself) and its state."""
    found = {".": _state(str(root))}
    for top, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(top, name)
            found[os.path.relpath(path, root)] = _state(path)
    return found


def differences(before: Snapshot, after: Snapshot) -> list[str]:
    """The paths whose state differs (made, removed or changed), sorted."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


def _read(root: Path, rel: str) -> bytes | None:
    """A file's bytes, None unless every component of `rel` is a real folder or file."""
    path = root
    for part in rel.split("/"):
        path = path / part
        if path.is_symlink() or not path.exists():
            return None
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError:
        return None


def _ref(root: Path, name: str) -> str | None:
    loose = _read(root, f".git/{name}")
    if loose is not None:
        readable = _readable(root / ".git" / name)
        return loose.decode("utf-8", "replace").strip() if readable else "unreadable"
    for line in (_read(root, ".git/packed-refs") or b"").decode("utf-8", "replace").splitlines():
        value, _, ref = line.partition(" ")
        if ref.strip() == name:
            return value
    return None


def _readable(path: Path, bits: int = 0o400) -> bool:
    """Whether the owner (the command user) may read it, as git in the sandbox must."""
    return os.lstat(path).st_mode & bits == bits


def _objects(root: Path) -> set[str]:
    """Every object id the repository holds where git can read it, loose or in a pack
    (index version 2)."""
    found: set[str] = set()
    store = root / ".git" / "objects"
    if store.is_symlink() or not store.is_dir() or not _readable(store, 0o500):
        return found
    for folder in store.glob("[0-9a-f][0-9a-f]"):
        if _readable(folder, 0o500):
            found |= {folder.name + entry.name for entry in folder.iterdir() if _readable(entry)}
    for index in store.glob("pack/pack-*.idx"):
        if not (_readable(index) and _readable(index.with_suffix(".pack"))):
            continue
        data = index.read_bytes()
        count = int.from_bytes(data[8 + 255 * 4 : 8 + 256 * 4], "big")
        start = 8 + 256 * 4
        found |= {data[start + 20 * i : start + 20 * (i + 1)].hex() for i in range(count)}
    return found


@dataclass(frozen=True)
class Layout:
    """The template canary tree and what its canaries were, to tell which ones changed."""

    template: Path
    files: Snapshot
    refs: dict[str, str | None]
    reflogs: dict[str, bytes | None]
    objects: frozenset[str]
    config: bytes | None

    @classmethod
    def at(cls, template: Path) -> Layout:
        """The layout of `template` (built by build_template)."""
        whole = snapshot(template)
        return cls(
            template,
            {p: s for p, s in whole.items() if ".git" not in p.split("/")},
            {name: _ref(template, ref) for name, ref in REFS.items()},
            {name: _read(template, f".git/logs/{ref}") for name, ref in REFLOGS.items()},
            frozenset(_objects(template)),
            _read(template, CONFIG),
        )

    def changed(self, root: Path) -> dict[str, str]:
        """canary -> how it changed, for every canary not as it was at `root`."""
        found: dict[str, str] = {}
        for path, was in self.files.items():
            full = root / path if path != "." else root
            try:
                now: State | None = _state(str(full)) if _no_link_above(root, path) else None
            except FileNotFoundError:
                now = None
            if now != was:
                found[path] = f"{_brief(was)} -> {_brief(now)}"
        for name, ref in REFS.items():
            value = _ref(root, ref)
            if value != self.refs[name]:
                found[name] = f"{self.refs[name]} -> {value}"
        for name, ref in REFLOGS.items():
            log, was_log = _read(root, f".git/logs/{ref}"), self.reflogs[name] or b""
            if log is None or not log.startswith(was_log):
                found[name] = "entries lost"
        lost = self.objects - _objects(root)
        if lost:
            found[OBJECTS] = f"{len(lost)} lost or unreadable"
        if _read(root, CONFIG) != self.config:
            found[CONFIG] = "changed"
        return found

    def lay_out(self, root: Path) -> None:
        """Make `root` a fresh copy of the template."""
        lay_out(self.template, root)


def _no_link_above(root: Path, path: str) -> bool:
    parts = path.split("/")[:-1] if path != "." else []
    return not any((root / "/".join(parts[: i + 1])).is_symlink() for i in range(len(parts)))


def _brief(state: State | None) -> str:
    if state is None:
        return "absent"
    kind, mode, size, digest = state
    return f"{kind} {mode:o} {size} B {digest[:8]}"


# --- what a card says ---------------------------------------------------------------------


def summary_of(body: str) -> str:
    """The effect sentence of an approval card's body ("It deletes 1 file: f." -> "deletes
    1 file: f"), or "" when the body has none."""
    for paragraph in body.split("\n\n"):
        if paragraph.startswith("It "):
            return paragraph.removeprefix("It ").removesuffix(".")
    return ""


def names(summary: str, canary: str) -> bool:
    """Whether the effect sentence names `canary`: a path itself or a folder holding it
    ("x/ (2 files)"), the workspace, a git ref by its owner's name (or its file), the objects,
    a reflog (or the ref whose deletion takes it), the config."""
    if canary == ".":
        return "the workspace" in summary
    if canary in REFS:
        return canary in summary or f".git/{REFS[canary]}" in summary
    if canary in REFLOGS:
        ref = REFLOGS[canary]
        own_name = "git HEAD" if ref == "HEAD" else "git branch main"
        return bool(re.search(rf"reflog[^;]*\b{re.escape(ref)}\b", summary)) or (
            f"deletes {own_name}" in summary
        )
    if canary == OBJECTS:
        told = r"removes \d+ git objects|damages \d+ git object file|in \.git of [^;]*objects/"
        return bool(re.search(told, summary))
    if canary == CONFIG:
        return CONFIG in summary
    tokens = set(re.split(r"[\s,;:()]+", summary))
    parts = canary.split("/")
    folders = {"/".join(parts[:i]) + "/" for i in range(1, len(parts) + 1)}
    return canary in tokens or bool(folders & tokens)


def unnamed(summary: str, canaries: Iterable[str]) -> list[str]:
    """The canaries the sentence does not name."""
    return sorted(c for c in canaries if not names(summary, c))


# --- the oracle: each command run for real on its own copy ---------------------------------

SCRIPT = """\
for case in {mount}/runs/*; do
  cd "$case/ws" || continue
  timeout -s KILL {limit} /bin/sh -c "$(cat "$case/command")" </dev/null >"$case/output" 2>&1
  echo $? >"$case/exit"
done
"""


@dataclass(frozen=True)
class Outcome:
    """What a command did when run for real on a copy of the layout."""

    exit_code: int
    changed: dict[str, str]  # canary -> how (see Layout.changed)
    tree: Snapshot  # the copy afterwards


def run_for_real(
    layout: Layout, commands: Sequence[str], where: Path, image: str, limit: float = 30.0
) -> list[Outcome]:
    """Run each command on its own copy of the layout in one plain container with the
    sandbox's hardening (same image, user, environment, read-only root, no network), the
    copies mounted read-write; what each did, in order."""
    runs = where / "runs"
    for n, command in enumerate(commands):
        case = runs / f"{n:04d}"
        layout.lay_out(case / "ws")
        (case / "command").write_text(command, encoding="utf-8")
    (where / "run.sh").write_text(SCRIPT.format(mount=MOUNT, limit=int(limit)))
    own(where)
    _run_container(where, image, timeout=len(commands) * 3 + 120)
    outcomes = []
    for n in range(len(commands)):
        case = runs / f"{n:04d}"
        code = (case / "exit").read_text().strip() if (case / "exit").exists() else "-1"
        tree = snapshot(case / "ws")
        outcomes.append(Outcome(int(code), layout.changed(case / "ws"), tree))
    _clear(where)
    return outcomes


def _run_container(where: Path, image: str, timeout: float) -> None:
    engine = DockerEngine(timeout=timeout)
    api = engine.api
    uid = command_user()
    created = api.create_container(
        image,
        command=["/bin/sh", f"{MOUNT}/run.sh"],
        user=f"{uid}:{uid}",
        working_dir=MOUNT,
        environment=EXEC_ENV,
        host_config=api.create_host_config(**host_config(SandboxLimits(image=image), where)),
        network_disabled=True,
    )
    try:
        api.start(created["Id"])
        status = api.wait(created["Id"], timeout=timeout)
        if status.get("StatusCode") != 0:
            raise RuntimeError(f"the plain run stopped: {status}")
    finally:
        api.remove_container(created["Id"], force=True)
        engine.close()
