"""EffectSet: everything a dry run would change, hashed so an approval binds to exactly it."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from core.tools.effects.model import Effect, GitChanges
from core.tools.effects.summary import SHOWN, describe, shown
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
    "git_history_lost",
    "git_refs_broken",
    "git_index",
    "git_config",
)
NOTHING = describe((), ())
# What git cannot give back once lost: objects (loose, or a pack and its index; a submodule's
# under modules/ too) and reflogs (git only ever appends to one: a shorter one lost entries).
OBJECT_FILE = re.compile(
    r"(?:.+/)?objects/(?:[0-9a-f]{2}/[0-9a-f]{38,62}|pack/pack-[0-9a-f]+\.(?:pack|idx))"
)
TOLD_OBJECT = re.compile(r"objects/(?:[0-9a-f]{2}/[0-9a-f]{38,62}|pack/pack-[0-9a-f]+\.pack)")


@dataclass(frozen=True, slots=True)
class GitLosses:
    """Changes inside .git that the ref, index and config summaries do not tell, and that
    take away what git needs or cannot rebuild."""

    objects: tuple[Effect, ...] = ()  # removed or rewritten
    reflogs: tuple[Effect, ...] = ()  # deleted or cut short
    modes: tuple[Effect, ...] = ()  # permissions changed

    def clauses(self) -> list[str]:
        """Each loss in the owner's words (removed objects are told by the git summary)."""
        said = []
        damaged = [e for e in self.objects if not _told_object(e)]
        if damaged:
            said.append(f"damages {_count(len(damaged), 'git object file')}")
        if self.reflogs:
            names = [_inside_git(e.path) for e in self.reflogs]
            listed = _listed([f"{inner.removeprefix('logs/')}{_at(repo)}" for repo, inner in names])
            said.append(f"erases reflog entries of {listed}")
        if self.modes:
            listed = _listed([e.path for e in self.modes])
            said.append(f"changes permissions in .git of {listed}")
        return [shown(clause) for clause in said]


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
        """One line in the owner's words (see summary.describe), with what git loses."""
        said = describe(self.effects, self.git)
        lost = self.git_losses().clauses()
        if not lost:
            return said
        return "; ".join([*([said] if said != NOTHING else []), *lost])

    def categories(self) -> dict[str, tuple[str, ...]]:
        """What the Soul's effect rules look at: category -> the paths or refs in it (only
        non-empty categories). Paths inside .git count through the git categories, except
        what git itself cannot give back (see git_losses), and refs moved so that commits
        are no longer reachable or set to what is not a commit (git_history_lost,
        git_refs_broken, besides their move): git objects and reflogs removed
        count as deletes, rewritten as overwrites, and permissions changed as mode_changes.
        A deleted file whose exact content the same command created elsewhere was moved,
        not lost ("moves"), and so was a deleted folder all of whose files were."""
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
            found["git_history_lost"] += [prefix + name for name in changes.lost]
            found["git_refs_broken"] += [prefix + name for name in changes.broken]
            if changes.index_changed:
                found["git_index"].append(changes.repo or ".")
            found["git_config"] += changes.config_changed
        lost = self.git_losses()
        for effect in (*lost.objects, *lost.reflogs):
            found["overwrites" if effect.after.exists else "deletes"].append(effect.path)
        found["mode_changes"] += [effect.path for effect in lost.modes]
        return {name: tuple(paths) for name, paths in found.items() if paths}

    def git_losses(self) -> GitLosses:
        """Inside .git: objects removed or rewritten, reflogs deleted or cut short, and any
        change of permissions (git may no longer read what it needs)."""
        deleted = {(c.repo, ref.name) for c in self.git for ref in c.refs if ref.kind == "deleted"}
        objects, reflogs, modes = [], [], []
        for effect in self.effects:
            if not effect.in_git:
                continue
            repo, inner = _inside_git(effect.path)
            if effect.kind == "mode_changed":
                modes.append(effect)
            elif effect.before.kind != "file":
                continue
            elif OBJECT_FILE.fullmatch(inner):
                objects.append(effect)
            elif _reflog_lost(repo, inner, effect, deleted):
                reflogs.append(effect)
        return GitLosses(tuple(objects), tuple(reflogs), tuple(modes))

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


def _inside_git(path: str) -> tuple[str, str]:
    """(work tree, path inside its .git) for a path in a repository's .git."""
    parts = path.split("/")
    at = parts.index(".git")
    return "/".join(parts[:at]), "/".join(parts[at + 1 :])


def _reflog_lost(repo: str, inner: str, effect: Effect, deleted: set[tuple[str, str]]) -> bool:
    """A reflog gone, or changed but no longer than it was (git only ever appends to one: the
    same length with other content is entries rewritten), unless its ref is deleted too
    (which says as much)."""
    if not inner.startswith("logs/") or (repo, inner.removeprefix("logs/")) in deleted:
        return False
    return effect.after.kind != "file" or effect.after.size <= effect.before.size


def _told_object(effect: Effect) -> bool:
    """A loose object or pack removed: the git summary counts it ("removes N git objects")."""
    return not effect.after.exists and bool(TOLD_OBJECT.fullmatch(_inside_git(effect.path)[1]))


def _at(repo: str) -> str:
    return f" in {repo}/" if repo else ""


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"


def _listed(items: list[str]) -> str:
    head = ", ".join(items[:SHOWN])
    return f"{head} and {len(items) - SHOWN} more" if len(items) > SHOWN else head
