"""EffectSet: everything a dry run would change, hashed so an approval binds to exactly it."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from core.tools.effects.model import Effect, GitChanges
from core.tools.effects.summary import describe
from core.tools.workspace import MOUNT

CATEGORIES = (
    "creates",
    "moves",
    "overwrites",
    "deletes",
    "mode_changes",
    "symlinks",
    "git_refs_created",
    "git_refs_moved",
    "git_refs_deleted",
    "git_index",
    "git_config",
)


@dataclass(frozen=True, slots=True)
class EffectSet:
    """The effects (sorted by path, one per path) and, for paths inside .git, what they mean
    to git. Built by the scan or read back with `from_dict`; never filled in later."""

    effects: tuple[Effect, ...] = ()
    git: tuple[GitChanges, ...] = ()

    @property
    def empty(self) -> bool:
        """Whether the command changed nothing in the workspace."""
        return not self.effects

    @property
    def digest(self) -> str:
        """sha256 of the effects' canonical JSON: what an approval card binds to. Times and
        inode numbers are left out, so the same outcome always hashes the same."""
        body = json.dumps(
            [effect.identity() for effect in self.effects],
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        return hashlib.sha256(body.encode("utf-8", "surrogateescape")).hexdigest()

    @property
    def summary(self) -> str:
        """One line in the owner's words (see summary.describe)."""
        return describe(self.effects, self.git)

    def categories(self) -> dict[str, tuple[str, ...]]:
        """What the Soul's effect rules look at: category -> the paths or refs in it (only
        non-empty categories). Paths inside .git count through the git categories only. A
        deleted file whose exact content the same command created elsewhere was moved, not
        lost ("moves"), and so was a deleted folder all of whose files were."""
        found: dict[str, list[str]] = {name: [] for name in CATEGORIES}
        moved = self._moved()
        for effect in self.effects:
            if effect.in_git:
                continue
            kind = effect.kind
            if kind == "deleted" and effect.path in moved:
                found["moves"].append(effect.path)
                continue
            key = {"created": "creates", "deleted": "deletes", "mode_changed": "mode_changes"}.get(
                kind, "overwrites"
            )
            found[key].append(effect.path)
            if effect.after.kind == "symlink":
                found["symlinks"].append(effect.path)
        for changes in self.git:
            prefix = f"{changes.repo}:" if changes.repo else ""
            for ref in changes.refs:
                found[f"git_refs_{ref.kind}"].append(prefix + ref.name)
            if changes.index_changed:
                found["git_index"].append(changes.repo or ".")
            found["git_config"] += changes.config_changed
        return {name: tuple(paths) for name, paths in found.items() if paths}

    def _moved(self) -> set[str]:
        """Deleted paths whose content lives on: each deleted file matched to a distinct new
        file with the same sha256; a deleted folder when every deleted path under it moved."""
        outside = [e for e in self.effects if not e.in_git]
        fresh = Counter(
            e.after.sha256 for e in outside if e.kind == "created" and e.after.kind == "file"
        )
        moved: set[str] = set()
        for effect in outside:
            sha = effect.before.sha256
            if effect.kind == "deleted" and effect.before.kind == "file" and fresh[sha] > 0:
                fresh[sha] -= 1
                moved.add(effect.path)
        folders = [e for e in outside if e.kind == "deleted" and e.before.kind == "dir"]
        for folder in sorted(folders, key=lambda e: e.path.count("/"), reverse=True):
            inside = [
                e.path
                for e in outside
                if e.kind == "deleted" and e.path.startswith(folder.path + "/")
            ]
            if inside and all(path in moved for path in inside):
                moved.add(folder.path)
        return moved

    def file_changes(self) -> dict[str, str | None]:
        """As ToolResult.file_changes: /workspace/<path> -> new sha256 (None when removed)
        for every file created, changed or removed."""
        changes: dict[str, str | None] = {}
        for effect in self.effects:
            if "file" in (effect.before.kind, effect.after.kind) and effect.kind != "mode_changed":
                name = str(MOUNT / effect.path)
                changes[name] = effect.after.sha256 if effect.after.kind == "file" else None
        return changes

    def paths(self) -> tuple[str, ...]:
        """Every path the effects touch."""
        return tuple(effect.path for effect in self.effects)

    def to_dict(self) -> dict[str, Any]:
        """The full stored form (read back by from_dict)."""
        return {
            "digest": self.digest,
            "effects": [effect.to_dict() for effect in self.effects],
            "git": [changes.to_dict() for changes in self.git],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EffectSet:
        """Back from the stored form; ValueError if it does not hash to its recorded digest."""
        built = cls(
            tuple(Effect.from_dict(item) for item in data["effects"]),
            tuple(GitChanges.from_dict(item) for item in data.get("git", ())),
        )
        if data.get("digest") not in (None, built.digest):
            raise ValueError("the stored effect set does not match its digest")
        return built

    def for_receipt(self, limit: int = 50) -> dict[str, Any]:
        """A bounded JSON form for a receipt: digest, summary, counts and the first paths."""
        counts: dict[str, int] = {}
        for effect in self.effects:
            counts[effect.kind] = counts.get(effect.kind, 0) + 1
        return {
            "digest": self.digest,
            "summary": self.summary,
            "counts": counts,
            "categories": {k: len(v) for k, v in self.categories().items()},
            "effects": [
                {
                    "path": e.path,
                    "kind": e.kind,
                    "before": e.before.identity(),
                    "after": e.after.identity(),
                }
                for e in self.effects[:limit]
            ],
            "more": max(0, len(self.effects) - limit),
            "git": [changes.to_dict() for changes in self.git],
        }
