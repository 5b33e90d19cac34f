"""Skill permissions and the capabilities each one allows: the one place that maps them."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class Permission(StrEnum):
    """What a manifest may ask for."""

    READ_INPUT = "read_input"
    WRITE_OUTPUT = "write_output"
    READ_CONFIG = "read_config"
    RUN_COMMANDS = "run_commands"
    READ_FILES = "read_files"
    WRITE_FILES = "write_files"
    DELETE_FILES = "delete_files"
    USE_REPO = "use_repo"
    NETWORK = "network"
    DEPLOY = "deploy"


# Capability names are the Soul's (soul/versions/soul_v1.yaml). A permission with no
# capability only opens the skill's own context (its inputs, outputs and configuration).
CAPABILITIES: dict[Permission, frozenset[str]] = {
    Permission.READ_INPUT: frozenset(),
    Permission.WRITE_OUTPUT: frozenset(),
    Permission.READ_CONFIG: frozenset(),
    Permission.RUN_COMMANDS: frozenset({"shell.exec"}),
    Permission.READ_FILES: frozenset({"file.read"}),
    Permission.WRITE_FILES: frozenset({"file.write", "file.move"}),
    Permission.DELETE_FILES: frozenset({"file.delete"}),
    Permission.USE_REPO: frozenset({"repo.commit", "repo.branch"}),
    Permission.NETWORK: frozenset({"net.request"}),
    Permission.DEPLOY: frozenset({"deploy"}),
}

# What a marketplace skill gets without the owner granting more.
MARKETPLACE_BASE: frozenset[Permission] = frozenset(
    {Permission.READ_INPUT, Permission.WRITE_OUTPUT, Permission.READ_CONFIG}
)


def capabilities_of(permissions: Iterable[Permission]) -> frozenset[str]:
    """Every capability the permissions allow."""
    found: set[str] = set()
    for permission in permissions:
        found |= CAPABILITIES[permission]
    return frozenset(found)


def permission_for(capability: str) -> Permission | None:
    """The permission a skill needs for a capability (None: no permission grants it)."""
    for permission, capabilities in CAPABILITIES.items():
        if capability in capabilities:
            return permission
    return None
