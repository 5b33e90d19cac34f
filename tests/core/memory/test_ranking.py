"""Search ranks by how rare the matching words are and how recently a fact was used, at a
bounded cost: a rare word finds the oldest fact that holds it among many newer ones."""

from __future__ import annotations

from core.memory import Memory, Provenance
from core.memory.ranking import PER_WORD


async def fill(memory: Memory, texts: list[str]) -> None:
    async with memory.begin(Provenance.OWNER, "bulk") as edit:
        for text in texts:
            edit.insert(text)


async def test_a_rare_word_finds_the_oldest_fact_among_many_newer(memory: Memory) -> None:
    await fill(memory, ["my home server is called atlas"])
    await fill(memory, [f"the office server number {i} runs backups" for i in range(PER_WORD * 5)])
    found = await memory.recall("which server is atlas?", limit=3)
    assert found[0].text == "my home server is called atlas"
    context = await memory.context("c1", "restart atlas please", 2000)
    assert "my home server is called atlas" in dict(context.sections)["What you remember"]


async def test_more_matching_words_rank_higher(memory: Memory) -> None:
    await fill(
        memory,
        [
            "the garden shed is painted green",
            "the garden gate key is under the green pot",
            "the car is green",
        ],
    )
    found = await memory.recall("green garden key", limit=3)
    assert found[0].text == "the garden gate key is under the green pot"
    assert {i.text for i in found[1:]} == {"the garden shed is painted green", "the car is green"}


async def test_common_words_alone_still_find_the_newest_matches(memory: Memory) -> None:
    await fill(memory, [f"backup report {i}" for i in range(PER_WORD * 3)])
    found = await memory.recall("backup report", limit=5)
    assert [i.text for i in found] == [
        f"backup report {i}" for i in range(PER_WORD * 3 - 1, PER_WORD * 3 - 6, -1)
    ]


async def test_any_text_is_a_safe_query(memory: Memory) -> None:
    await fill(memory, ["near the station"])
    for query in ('"', "*", "NEAR(a b)", "a OR b AND NOT c", "col:value", "^start", "😀", ""):
        await memory.recall(query)
        await memory.context("c1", query, 500)
    assert [i.text for i in await memory.recall('NEAR("station"')] == ["near the station"]
