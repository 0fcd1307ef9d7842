"""Current state by state key: the newest memory of an NPC under a key is current, older ones its history.

On main before keys, Ada's opinions of Cole (day 1 "I don't trust him", day 3 "I was wrong about him", day 4 "a
trustworthy friend now") came back stale-first at top_k 2 and 3 (the swap needed both among the candidates),
`memory-sim relationship ada cole` listed "I don't trust him" first, `opinion` said "" or "That has not changed"
of views that changed and dated a day-3 change "until day 4", `relationship --json` had no opinion lines, and
shown scores contradicted the order (a weighted score above score x importance). These tests run on the shipped
stack (Chroma, DuckDB, the bundled MiniLM) where they claim recall's behaviour."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_sim.cli import main
from memory_sim.env import Env
from memory_sim.memory.models import Recollection, ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
DISTRUST, CHEATED = "I don't trust him.", "Cole shortchanged me at the market again."
WRONG, FRIEND = "I was wrong about him.", "Cole is a trustworthy friend now."
ADA_ON_COLE = [(1, DISTRUST), (2, CHEATED), (3, WRONG), (4, FRIEND)]  # oldest first; FRIEND is current
OTHERS = [
    (1, "The well by the square ran dry in the heat.", None),
    (2, "Bought flour and salt from the mill.", None),
    (3, "Bella lent me her good ladder for the roof.", ("bella",)),
    (4, "A storm took two tiles off the bakery roof.", None),
]
QUESTION = "What does Ada think of Cole?"


def ada_and_cole(system: MemorySystem, importance: tuple[float, ...] = (0.9, 0.6, 0.8, 0.65)) -> None:
    """Ada's four opinions of Cole and others. The current one is less important than the first and kept in D1
    only (0.65: never embedded), so only its key can bring it into vector recall and put it first."""
    system.register_npc("ada", "Ada", role="the weaver")
    system.register_npc("cole", "Cole", role="the carter")
    system.register_npc("bella", "Bella", role="the roofer")
    for (day, text), imp in zip(ADA_ON_COLE, importance, strict=True):
        system.remember(ShortTermMemory("ada", text, imp, WorldTime(day, 10), type="opinion", about=("cole",)))
    for day, text, about in OTHERS:
        system.remember(ShortTermMemory("ada", text, 0.8, WorldTime(day, 15), about=about or ()))


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemorySystem]:
    clock = SimClock()
    with Env.local(tmp_path_factory.mktemp("ada"), environ={}, embed_model=MINILM) as env:
        system = MemorySystem(env, clock=clock)
        ada_and_cole(system)
        clock.advance_to(WorldTime(5, 9))
        yield system


def _opinions(found: list[Recollection]) -> list[str]:
    return [r.text for r in found if r.text in dict(ADA_ON_COLE).values()]


def _recall(system: MemorySystem, weighted: bool, mode: str, top_k: int, recent: bool) -> list[Recollection]:
    if weighted:
        return system.weighted_recall("ada", QUESTION, top_k=top_k, mode=mode,  # type: ignore[arg-type]
                                      include_recent=recent)
    return system.recall("ada", QUESTION, top_k=top_k, mode=mode, include_recent=recent)  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.parametrize("recent", [False, True], ids=["", "include_recent"])
@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weighted"])
@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_the_current_opinion_ranks_first_at_every_top_k(shipped: MemorySystem, mode: str, weighted: bool,
                                                        recent: bool) -> None:
    for top_k in (1, 2, 3, 4):
        found = _recall(shipped, weighted, mode, top_k, recent)
        opinions = _opinions(found)
        assert opinions and opinions[0] == FRIEND, (mode, weighted, top_k, [r.text for r in found])
        for r in found:  # every stale version is marked with the next newer memory under its key
            assert r.state_key == ("opinion:cole" if r.text in opinions else r.state_key)
            assert (r.superseded_by is None) == (r.text not in opinions or r.text == FRIEND)
        if not weighted:  # plain recall: the question is about Cole, so the current view is the answer
            assert found[0].text == FRIEND, (mode, top_k, [r.text for r in found])
    assert shipped.memory(shipped.history("ada", "opinion:cole")[0].id).index_state == "none"  # D1 only


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_the_score_shown_is_the_score_that_ordered_the_list(shipped: MemorySystem, mode: str) -> None:
    for top_k in (1, 3, 8):
        plain = shipped.recall("ada", QUESTION, top_k=top_k, mode=mode)  # type: ignore[arg-type]
        assert [r.score for r in plain] == sorted((r.score for r in plain), reverse=True)
        weighted = shipped.weighted_recall("ada", QUESTION, top_k=top_k, mode=mode)  # type: ignore[arg-type]
        assert [r.effective_score for r in weighted] == sorted((r.effective_score or 0 for r in weighted),
                                                               reverse=True)
        for r in weighted:  # the design's formula, as shown beside the weighted score
            formula = r.score * r.importance / (1 + max(0, 5 - r.day) * r.decay_factor)
            assert r.effective_score == pytest.approx(formula, rel=1e-6), r.text


@pytest.mark.slow
def test_history_current_state_and_links_come_from_the_key(shipped: MemorySystem) -> None:
    history = shipped.history("ada", "opinion:cole")
    assert [m.content for m in history] == [FRIEND, WRONG, CHEATED, DISTRUST]
    assert all(m.key_confidence is not None and m.state_key == "opinion:cole" for m in history)
    assert shipped.current_state("ada")["opinion:cole"].content == FRIEND
    oldest = history[-1]
    links = shipped.belief_links(oldest.id)
    assert links.superseded_by is not None and links.superseded_by.content == CHEATED and links.supersedes == ()
    assert [m.content for m in shipped.belief_links(history[0].id).supersedes] == [WRONG]
    lineage = shipped.lineage(oldest.id)
    assert lineage.state_key == "opinion:cole" and [m.content for m in lineage.history][0] == FRIEND


@pytest.mark.slow
def test_opinion_tells_the_current_view_with_its_day_then_how_it_changed(shipped: MemorySystem) -> None:
    assert shipped.opinion("ada", "cole") == (
        f'Ada\'s view of Cole, since day 4: "{FRIEND}" Before that (3 earlier views, newest first): day 3, '
        f'"{WRONG}"; day 2, "{CHEATED}"; day 1, "{DISTRUST}"')
    assert shipped.opinion("cole", "ada") == "Cole has no opinion of Ada yet."
    assert shipped.opinion("ada", "bella") == "Ada has no opinion of Bella yet."  # an event about her is no view
    context = shipped.relationship_context("ada", "cole", top_k=4)
    assert context.a_opinion == shipped.opinion("ada", "cole")
    assert _opinions(context.a_recalls)[0] == FRIEND


def test_a_key_is_stored_as_the_game_gave_it_or_as_inferred(system: MemorySystem) -> None:
    system.register_npc("ada", "Ada")
    system.register_npc("cole", "Cole", role="the carter")
    game = ShortTermMemory("ada", "I owe Cole two silver.", 0.5, WorldTime(1), state_key="debt:cole")
    named = ShortTermMemory("ada", "The carter is a cheat.", 0.5, WorldTime(1, 2), type="opinion")  # role names him
    own = ShortTermMemory("ada", "Ada is tired of Cole.", 0.5, WorldTime(1, 3), type="opinion")  # own name left out
    plain = ShortTermMemory("ada", "It rained all day.", 0.5, WorldTime(1, 4))
    system.remember_many([game, named, own, plain])
    stored = {m.id: m for m in system.memories("ada").memories}
    assert (stored[game.id].state_key, stored[game.id].key_confidence, stored[game.id].key_source) == (
        "debt:cole", 1.0, "game")
    assert (stored[named.id].state_key, stored[named.id].key_source) == ("opinion:cole", "inferred")
    assert stored[own.id].state_key == "opinion:cole"
    assert stored[plain.id].state_key is None and stored[plain.id].key_confidence is None
    assert set(system.current_state("ada")) == {"debt:cole", "opinion:cole"}
    assert system.history("ada", "opinion:cole")[0].id == own.id


def test_a_stale_version_alone_among_the_candidates_pulls_in_the_current_one(system: MemorySystem,
                                                                             clock: SimClock) -> None:
    """The paid debt shares no word with the question; only its key brings it, above the debt."""
    key = "debt:mira"
    system.remember(ShortTermMemory("tom", "Mira still owes me three silver.", 0.9, WorldTime(2), state_key=key))
    system.remember(ShortTermMemory("tom", "All square with the innkeeper.", 0.8, WorldTime(9), state_key=key))
    clock.advance_to(WorldTime(10))
    for found in (system.recall("tom", "owes silver", top_k=1, mode="keyword"),
                  system.weighted_recall("tom", "owes silver", top_k=2, mode="keyword")):
        assert found[0].text == "All square with the innkeeper." and found[0].source == "vectorize"
        assert found[0].superseded_by is None and found[0].state_key == "debt:mira"
    stale = system.recall("tom", "owes silver", top_k=2, mode="keyword")[1]
    assert stale.superseded_by == found[0].id and stale.to_json()["stateKey"] == "debt:mira"


def test_an_old_folder_gets_its_keys_when_it_migrates(tmp_path: Path) -> None:
    """Migration 8 infers the keys of memories remembered before it (structure only: no model while opening)."""
    from memory_sim.memory.ledger import schema

    clock = SimClock()
    with Env.local(tmp_path / "old", environ={}, embed_model="fake/hashing") as env:
        db = env.DB
        schema.current_version(db)
        for number, description, statements in schema.MIGRATIONS[:7]:
            record = db.prepare("INSERT INTO schema_version (version, description, applied_at) VALUES (?, ?, ?)")
            db.batch([db.prepare(sql) for sql in statements] + [record.bind(number, description, 0.0)])
        db.prepare("INSERT INTO npc_state (npc_id, name, role) VALUES ('cole', 'Cole', 'the carter')").run()
        insert = db.prepare("INSERT INTO short_term_memories (id, npc_id, content, importance, day, hour, type, about,"
                            " decay_factor, decayed_day, seq) VALUES (?, 'ada', ?, 0.5, ?, 0, ?, ?, 0.1, 0, ?)")
        db.batch([insert.bind("a1", DISTRUST, 1, "opinion", "cole", 1), insert.bind("a2", FRIEND, 4, "opinion", "", 2),
                  insert.bind("a3", "It rained.", 2, "event", "", 3)])
        system = MemorySystem(env, clock=clock)
        assert schema.current_version(db) == schema.SCHEMA_VERSION
        assert [m.id for m in system.history("ada", "opinion:cole")] == ["a2", "a1"]
        assert system.memory("a3").state_key is None and system.memory("a1").key_source == "inferred"


def test_the_command_line_shows_keys_history_and_opinions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = ["--data", str(tmp_path / "v"), "--model", "fake/hashing"]
    for day, text in ADA_ON_COLE:
        assert main([*data, "remember", "ada", text, "--importance", "0.9", "--day", str(day), "--type", "opinion",
                     "--about", "cole"]) == 0
    assert main([*data, "remember", "cole", "Ada wove me a fine blanket.", "--day", "2"]) == 0
    capsys.readouterr()
    assert main([*data, "relationship", "ada", "cole"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (f'ada recalls: ada\'s view of cole, since day 4: "{FRIEND}" Before that (3 earlier views, '
                      f'newest first): day 3, "{WRONG}"; day 2, "{CHEATED}"; day 1, "{DISTRUST}"')
    recalled = [line.strip() for line in out[1:out.index("cole recalls: cole has no opinion of ada yet.")]]
    assert FRIEND in recalled[0] and DISTRUST in recalled[-1] and "[opinion:cole]" in recalled[0]
    assert "cole recalls: cole has no opinion of ada yet." in out
    assert main([*data, "relationship", "ada", "cole", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    opinions = {"ada": out[0].removeprefix("ada recalls: "), "cole": "cole has no opinion of ada yet."}
    assert answer["opinions"] == opinions
    assert answer["ada"][0]["text"] == FRIEND and answer["ada"][0]["stateKey"] == "opinion:cole"
    assert main([*data, "recall", "ada", "What about Cole?", "--top-k", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(f"{FRIEND}  [opinion:cole]") and "(superseded by a later memory" in lines[1]


@pytest.mark.parametrize("days", [2, 14])
def test_the_demos_answer_counts_and_dates_what_it_says(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        days: int) -> None:
    """Seen on main: "turned 6 times (days 2, 4, 8, 10 and 12)" (five days), "until day 0; since day 0" in a
    2-day demo, and "distrusts" beside a positive affinity. The answer now quotes the current view with its day,
    then says how many earlier views there were and lists them newest first."""
    import re

    assert main(["demo", "--data", str(tmp_path / "demo"), "--model", "fake/hashing", "--days", str(days)]) == 0
    out = capsys.readouterr().out.split("What does Margaret think of Tom?")[1].splitlines()
    line = out[1]
    shown = [tuple(map(float, m.groups())) for m in (re.match(r"  score (\S+)  weighted (\S+)  imp (\S+)", x)
                                                      for x in out) if m]
    assert [w for _, w, _ in shown] == sorted((w for _, w, _ in shown), reverse=True)  # ordered by what it shows
    assert all(w <= s * i + 1e-3 for s, w, i in shown), shown  # score x importance / (1 + age x decay) >= 1
    day = int(re.search(r"\(margaret, on day (\d+)\)", out[0]).group(1))  # type: ignore[union-attr]
    assert main(["--data", str(tmp_path / "demo"), "--model", "fake/hashing", "recall", "margaret",
                 "What does Margaret think of Tom?", "--weighted", "--day", str(day), "--json"]) == 0
    cli = [(round(r["score"], 3), round(r["effectiveScore"], 3)) for r in json.loads(capsys.readouterr().out)]
    assert [(s, w) for s, w, _ in shown][:2] == cli[:2]  # one memory, one score, in the demo and in recall
    assert "until day" not in line and "distrusts" not in line and "turned" not in line
    if "has no opinion of Tom yet" in line or '" No earlier view. Affinity' in line:
        return
    since = int(re.search(r"Margaret's view of Tom, since day (\d+):", line).group(1))  # type: ignore[union-attr]
    told = re.search(r"Before that \((\d+) earlier views?, newest first\): (.*?)(?:; and (\d+) more \(days? "
                     r"(\d+)(?: to (\d+))?\))?\. Affinity", line)
    assert told is not None, line
    quoted_days = [int(d) for d in re.findall(r"(?:^|; )day (\d+), \"", told.group(2))]
    more = int(told.group(3) or 0)
    assert int(told.group(1)) == len(quoted_days) + more  # the count agrees with what is listed
    assert quoted_days == sorted(quoted_days, reverse=True) and all(d <= since for d in quoted_days)
    if more:
        assert int(told.group(5) or told.group(4)) <= quoted_days[-1]


def test_the_command_line_remembers_a_games_key_and_shows_state_and_history(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = ["--data", str(tmp_path / "v"), "--model", "fake/hashing"]
    for day, text in ((2, "I owe Mira three silver."), (9, "All square with Mira.")):
        assert main([*data, "remember", "tom", text, "--day", str(day), "--key", "debt:mira"]) == 0
    assert main([*data, "remember", "tom", DISTRUST, "--day", "3", "--type", "opinion", "--about", "cole"]) == 0
    capsys.readouterr()
    assert main([*data, "state", "tom"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "debt:mira  day 9 23h  All square with Mira.  (game, 1.00)",
        f"opinion:cole  day 3 23h  {DISTRUST}  (inferred, 0.90)"]
    assert main([*data, "state", "tom", "debt:mira", "--json"]) == 0
    history = json.loads(capsys.readouterr().out)
    assert [(m["day"], m["stateKey"], m["keySource"]) for m in history] == [(9, "debt:mira", "game"),
                                                                             (2, "debt:mira", "game")]
    assert main([*data, "remember", "tom", "x", "--key", "Debt:Mira"]) == 2
