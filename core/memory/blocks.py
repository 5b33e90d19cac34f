"""The core blocks: the few always-present texts (persona, human, ...), typed and bounded."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from core.memory.model import MemoryRefused


class Block(StrEnum):
    """The names of the core blocks, in the order the context shows them."""

    PERSONA = "persona"
    HUMAN = "human"
    MISSION = "mission"
    OPERATING_RULES = "operating_rules"
    WORKSPACE_STATE = "workspace_state"


@dataclass(frozen=True, slots=True)
class BlockSpec:
    """A block's title in the context, its longest text, and what belongs in it."""

    block: Block
    title: str
    max_chars: int
    purpose: str


SPECS: dict[Block, BlockSpec] = {
    spec.block: spec
    for spec in (
        BlockSpec(Block.PERSONA, "Persona", 1200, "who the agent is and how it speaks"),
        BlockSpec(Block.HUMAN, "About the owner", 1200, "the owner's name, preferences, habits"),
        BlockSpec(Block.MISSION, "Mission", 800, "what the agent is for, for this owner"),
        BlockSpec(
            Block.OPERATING_RULES, "Operating rules", 1600, "standing instructions from the owner"
        ),
        BlockSpec(Block.WORKSPACE_STATE, "Workspace", 1200, "what is in the workspace and where"),
    )
}


def spec_of(name: str) -> BlockSpec:
    """The spec of block `name`; MemoryRefused for a name that is not a core block."""
    try:
        return SPECS[Block(name)]
    except ValueError:
        known = ", ".join(b.value for b in Block)
        raise MemoryRefused(f"there is no core block {name!r} (known: {known})") from None


def check_block_text(name: str, text: str) -> str:
    """The text, if it fits block `name`; MemoryRefused naming the limit otherwise."""
    spec = spec_of(name)
    if len(text) > spec.max_chars:
        raise MemoryRefused(
            f"the {spec.block.value} block holds at most {spec.max_chars} characters"
            f" ({len(text)} given)"
        )
    return text
