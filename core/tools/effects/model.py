"""What a path was and what it becomes: the pieces an effect set is made of."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["absent", "file", "dir", "symlink", "fifo", "other"]
EffectKind = Literal["created", "deleted", "modified", "mode_changed", "replaced"]
KINDS: tuple[Kind, ...] = ("absent", "file", "dir", "symlink", "fifo", "other")


@dataclass(frozen=True, slots=True)
class FileState:
    """One path's state, and enough to recognise it again.

    `sha256` is a file's content hash; for a directory, the hash of the names inside it when
    that matters (a directory about to be deleted must still hold only what was seen).
    `mtime_ns`, `ctime_ns` and `ino` only let a later check skip re-hashing an untouched file,
    and `uid`/`gid` (-1: unknown) let a root Lancelot give files back their owner; none of them
    is part of what an approval binds to.
    """

    kind: Kind = "absent"
    mode: int = 0
    size: int = 0
    sha256: str | None = None
    target: str | None = None
    mtime_ns: int = 0
    ctime_ns: int = 0
    ino: int = 0
    uid: int = -1
    gid: int = -1

    @property
    def exists(self) -> bool:
        """Whether anything is at the path."""
        return self.kind != "absent"

    def unchanged_stat(self, other: FileState) -> bool:
        """Whether `other` is visibly the very same inode, untouched since (ctime cannot be
        set back by a program), so its hash need not be computed again."""
        return (
            self.kind == other.kind == "file"
            and self.ino == other.ino != 0
            and (self.size, self.mtime_ns, self.ctime_ns)
            == (other.size, other.mtime_ns, other.ctime_ns)
        )

    def matches(self, now: FileState) -> bool:
        """Whether `now` (read from disk) is this state, as far as an apply or undo cares."""
        if self.kind != now.kind:
            return False
        if self.kind == "file":
            return (self.size, self.mode, self.sha256) == (now.size, now.mode, now.sha256)
        if self.kind == "dir":
            return self.mode == now.mode and self.sha256 in (None, now.sha256)
        if self.kind == "symlink":
            return self.target == now.target
        return self.kind == "absent" or self.mode == now.mode

    def identity(self) -> dict[str, Any]:
        """The fields an approval binds to: no times, inode numbers or owners, and no
        directory listing (the paths inside have effects of their own)."""
        return {
            "kind": self.kind,
            "mode": self.mode,
            "size": self.size,
            "sha256": self.sha256 if self.kind != "dir" else None,
            "target": self.target,
        }

    def to_dict(self) -> dict[str, Any]:
        """The stored form."""
        return {
            **self.identity(),
            "sha256": self.sha256,
            "mtime_ns": self.mtime_ns,
            "ctime_ns": self.ctime_ns,
            "ino": self.ino,
            "uid": self.uid,
            "gid": self.gid,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FileState:
        """Back from the stored form; ValueError when it is not one."""
        kind = data.get("kind")
        if kind not in KINDS:
            raise ValueError(f"unknown file kind {kind!r}")
        return cls(
            kind=kind,
            mode=int(data.get("mode", 0)),
            size=int(data.get("size", 0)),
            sha256=data.get("sha256"),
            target=data.get("target"),
            mtime_ns=int(data.get("mtime_ns", 0)),
            ctime_ns=int(data.get("ctime_ns", 0)),
            ino=int(data.get("ino", 0)),
            uid=int(data.get("uid", -1)),
            gid=int(data.get("gid", -1)),
        )


ABSENT = FileState()


@dataclass(frozen=True, slots=True)
class Effect:
    """One path in the workspace, before and after. `path` is relative ("notes/a.txt")."""

    path: str
    before: FileState
    after: FileState

    @property
    def kind(self) -> EffectKind:
        """What happens to the path, in one word."""
        before, after = self.before, self.after
        if not before.exists:
            return "created"
        if not after.exists:
            return "deleted"
        if before.kind != after.kind:
            return "replaced"
        if before.kind == "file" and before.sha256 != after.sha256:
            return "modified"
        if before.kind == "symlink" and before.target != after.target:
            return "modified"
        return "mode_changed"

    @property
    def destroys(self) -> bool:
        """Whether what was at the path is lost (and must be kept for an undo)."""
        return self.kind in ("deleted", "modified", "replaced")

    @property
    def in_git(self) -> bool:
        """Whether the path is a repository's .git or inside it."""
        return ".git" in self.path.split("/")

    def identity(self) -> dict[str, Any]:
        """The fields an approval binds to."""
        return {"path": self.path, "before": self.before.identity(), "after": self.after.identity()}

    def to_dict(self) -> dict[str, Any]:
        """The stored form."""
        return {"path": self.path, "before": self.before.to_dict(), "after": self.after.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Effect:
        """Back from the stored form."""
        return cls(
            str(data["path"]),
            FileState.from_dict(data["before"]),
            FileState.from_dict(data["after"]),
        )

    def inverse(self) -> Effect:
        """The effect that takes the path back (what an undo applies)."""
        return Effect(self.path, self.after, self.before)


@dataclass(frozen=True, slots=True)
class RefChange:
    """A git ref that appears, moves or goes: values are commit ids or "ref: <name>"."""

    name: str
    before: str | None
    after: str | None

    @property
    def kind(self) -> Literal["created", "deleted", "moved"]:
        """What happens to the ref."""
        if self.before is None:
            return "created"
        return "deleted" if self.after is None else "moved"

    def to_dict(self) -> dict[str, Any]:
        """The stored form."""
        return {"name": self.name, "before": self.before, "after": self.after}


@dataclass(frozen=True, slots=True)
class GitChanges:
    """What a command did to one repository, as git would tell it. `repo` is the work tree's
    path in the workspace ("" for the workspace itself). `lost`: refs moved so that commits
    are no longer reachable from any ref; `broken`: refs set to something that is not a
    commit (core/tools/effects/history.py)."""

    repo: str
    refs: tuple[RefChange, ...] = ()
    index_changed: bool = False
    objects_added: int = 0
    objects_removed: int = 0
    config_changed: tuple[str, ...] = ()  # config, hooks, info/attributes: what git obeys
    other_files: int = 0
    lost: tuple[str, ...] = ()
    broken: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The stored form."""
        return {
            "repo": self.repo,
            "refs": [ref.to_dict() for ref in self.refs],
            "index_changed": self.index_changed,
            "objects_added": self.objects_added,
            "objects_removed": self.objects_removed,
            "config_changed": list(self.config_changed),
            "other_files": self.other_files,
            "lost": list(self.lost),
            "broken": list(self.broken),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GitChanges:
        """Back from the stored form."""
        refs = tuple(RefChange(r["name"], r.get("before"), r.get("after")) for r in data["refs"])
        return cls(
            repo=str(data["repo"]),
            refs=refs,
            index_changed=bool(data.get("index_changed")),
            objects_added=int(data.get("objects_added", 0)),
            objects_removed=int(data.get("objects_removed", 0)),
            config_changed=tuple(data.get("config_changed", ())),
            other_files=int(data.get("other_files", 0)),
            lost=tuple(data.get("lost", ())),
            broken=tuple(data.get("broken", ())),
        )
