"""LoCoMo loader on a tiny synthetic sample with the real file's quirks, and the real file's counts."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from memory_sim.errors import ConfigError
from memory_sim.locomo import load_locomo, parse_session_date

REAL_FILE = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo10.json"

SAMPLE = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ann",
        "speaker_b": "Bob",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "Hi Bob!"},
            {"speaker": "Bob", "dia_id": "D1:2", "text": "Look at my dog", "img_url": ["u"],
             "blip_caption": "a photo of a dog"},
        ],
        "session_2_date_time": "10:02 AM on 10 May, 2023",
        "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "I went hiking."}],
        "session_3_date_time": "9:00 am on 1 June, 2023",  # orphan date key with no session: ignored
    },
    "qa": [
        {"question": "What pet does Bob have?", "answer": "a dog", "evidence": ["D1:2"], "category": 4},
        {"question": "When did Ann hike?", "answer": 2023, "evidence": ["D2:1; D1:1", "D2:1"], "category": 2},
        {"question": "Broken?", "answer": "x", "evidence": ["D", "D:1:2"], "category": 1},
        {"question": "Trap?", "adversarial_answer": "y", "evidence": ["D1:1"], "category": 5},
    ],
}


@pytest.fixture
def sample_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([SAMPLE]))
    return path


def test_sessions_turns_and_days(sample_file: Path) -> None:
    (conv,) = load_locomo(sample_file)
    assert conv.id == "conv-x" and conv.speakers == ("Ann", "Bob")
    assert [s.number for s in conv.sessions] == [1, 2]
    assert [s.day for s in conv.sessions] == [0, 2]
    assert conv.sessions[1].started == datetime(2023, 5, 10, 10, 2)
    assert [(t.id, t.index, t.session, t.day) for t in conv.turns] == [
        ("D1:1", 0, 1, 0), ("D1:2", 1, 1, 0), ("D2:1", 2, 2, 2)]
    assert conv.turns[1].image_caption == "a photo of a dog" and conv.turns[0].image_caption is None


def test_questions_keep_only_well_formed_evidence_and_categories(sample_file: Path) -> None:
    (conv,) = load_locomo(sample_file)
    assert [(q.text, q.category, q.evidence) for q in conv.questions] == [
        ("What pet does Bob have?", 4, ("D1:2",)), ("When did Ann hike?", 2, ("D2:1",))]
    assert conv.questions[1].answer == "2023"
    assert conv.questions[1].raw_evidence == ("D2:1; D1:1", "D2:1")


def test_all_categories_without_evidence_filter(sample_file: Path) -> None:
    (conv,) = load_locomo(sample_file, categories=frozenset(range(1, 6)), require_evidence=False)
    assert [q.category for q in conv.questions] == [4, 2, 1, 5]
    assert conv.questions[2].evidence == () and conv.questions[3].answer == "y"


def test_bad_dates_and_files_raise_config_errors(tmp_path: Path) -> None:
    assert parse_session_date("12:37  am on 31 October, 2022") == datetime(2022, 10, 31, 0, 37)
    with pytest.raises(ConfigError):
        parse_session_date("yesterday")
    with pytest.raises(ConfigError):
        load_locomo(tmp_path / "missing.json")


@pytest.mark.skipif(not REAL_FILE.exists(), reason="shared LoCoMo file not present")
def test_real_file_counts() -> None:
    everything = load_locomo(REAL_FILE, categories=frozenset(range(1, 6)), require_evidence=False)
    assert len(everything) == 10
    assert sum(len(c.turns) for c in everything) == 5882
    assert sum(len(c.sessions) for c in everything) == 272
    assert sum(len(c.questions) for c in everything) == 1986
    scored = load_locomo(REAL_FILE)
    assert sum(len(c.questions) for c in scored) == 1531
