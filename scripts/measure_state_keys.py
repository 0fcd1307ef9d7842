"""State-key inference (memory/beliefs/keys.py) measured on the labelled pairs with the bundled MiniLM, as the
memory system runs it: writes benchmarks/state_keys.{md,json} (every split; misses of tuning and held_out only).

    .venv/bin/python scripts/measure_state_keys.py             # bundled all-MiniLM-L6-v2, about a minute
    .venv/bin/python scripts/measure_state_keys.py --no-embed  # cue words and types only
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory_sim.env import Env  # noqa: E402
from memory_sim.eval.state_keys import MISSES_SHOWN, load_pairs, measure, report  # noqa: E402

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
PAIRS = ROOT / "tests" / "memory" / "data" / "state_key_pairs.json"
HISTORY = """
## How blind each held-out split is

- held_out was written first and committed before any code ran on it. Its one blind run
  (state_keys_first_held_out_run.md: link precision 0.978, recall 0.667) listed its misses; since then it has
  been the validation split (choosing between variants; a few tuning pairs were written against the kinds of
  confusion it showed), so its figures here are not blind.
- held_out_2 was written after that run and committed before any code ran on it. Its figures were looked at
  five times in aggregate, never its misses, while the rules and the tuning data changed
  (state_keys_first_held_out_2_run.md: link 0.943/0.550; then 0.974/0.633, 0.978/0.750, 0.979/0.767, and the
  figures above).
- held_out_3 was written after held_out_2's fourth look and committed before any code ran on it; it was run
  once, blind (state_keys_first_held_out_3_run.md: link 0.981/0.867, key 0.961/0.930). Its misses then showed
  one plain bug, an adverb taken for a thing ("my hand badly" -> possession:badly), fixed afterwards: only key
  precision moved. Since then only its aggregate figures were looked at (twice more, with the final code).
  One person wrote held_out to held_out_3 and the rules, so none is blind to that writer's style.
- held_out_4 (118 pairs, a coastal parish, 12 new NPCs) was written by a later session before it changed any
  code, without reading the other held-out texts, and committed before any code ran on it. That session then
  wrote 132 tuning pairs, added structural rules found on them, and ran held_out_4 with the finished code
  (link 0.982/0.743, key 0.894/0.873), then once more after tightening one rule for a false key the sim village
  showed (the figures above: links the same). Its misses are not listed here, so it stays blind; the same
  person wrote it and the last tuning rounds.
- Before that session (on main): held_out_2 0.979/0.767, held_out_3 0.981/0.867, held_out 1.000/0.894, tuning
  1.000/0.956 (link precision/recall).
- A later session taught the aspect model lines of talk (the chatter set, chatter_keys.md). Its aggregates on
  the held-out splits were looked at three times: with the speech rules alone (unchanged), with every chatter
  tuning line among the examples (link recall held_out 0.894, held_out_2 0.783, held_out_3 0.817, held_out_4
  0.716: narrated small talk pulled real updates to "no state"), and with the final code (the figures above: a
  line of talk's embedding in a block of its own, only lines of talk among the examples), chosen on the
  validation split (held_out) and the chatter tuning lines before its held-out figures were seen: link recall
  held_out 0.939, held_out_2 0.833, held_out_3 0.817, held_out_4 0.743. Then an eleventh tuning round (t596-t734,
  a helper writing from the vocabulary and tuning pairs; it saw held_out's first 39 pairs and one held_out_4 pair
  by accident) was kept, being neutral on the validation split (0.939 both), and the held-out splits looked at once
  more: link recall held_out 0.939, held_out_2 0.850, held_out_3 0.883, held_out_4 0.757.
- The session after that named the thing of a plan or possession by grammar rules found on the tuning misses only
  (a helper who read only the tuning pairs: where a noun phrase ends, "a mind to visit my sister", "oats instead
  of barley", a plan called off, where a plan of going goes, the object of someone else's deed). Tuning link
  recall 0.935 -> 0.950. The held-out splits were then looked at once, in aggregate: the figures above (link
  recall held_out +1, held_out_2 +1, held_out_3 the same, held_out_4 -1). While reading a test's lines the lead
  saw nine held_out_4 pairs (w001-w009, opinion updates with the NPC given) by accident; nothing was changed
  after that.
- The next session let key inference know the keys the NPC holds (infer_key's `held`; the newer memory of a pair
  is read knowing the older's key, as `remember` reads it), its share (0.3) chosen on tuning and held_out (at 0.2
  and 0.1 compatible pairs began to link). Link recall: tuning 0.950 -> 0.962, held_out 0.955 -> 0.970,
  held_out_2 0.867 -> 0.883, held_out_3 0.883 -> 0.900, held_out_4 0.743 -> 0.838; precision 0.98-1.0 as before.
  held_out_5 (100 pairs, a mining town, written blind from the vocabulary and two example pairs) was then run
  once: link 0.963/0.400, key 0.730/0.584; its misses' aggregate reasons were looked at (terse lines with no
  first-person word, read as no state of the NPC's), not their texts. A rule for those (a line with no subject
  of its own is the writer's), developed on a twelfth tuning round (t735-t750), then gave link recall tuning
  0.959 (16 new pairs), held_out_4 0.851 (precision 0.984), held_out_5 0.569 (precision 0.949; its second,
  aggregate look), the others the same; LoCoMo hybrid r@5 0.6958 -> 0.6972, chatter held-out the same.
  Rules for reports ("Heard ...", "Word is ..."), held things named in a line about something else and "the
  ford's" came from a thirteenth tuning round (t751-t870, register variety, by a helper): on that round, before
  any refit, 53 -> 63 of 82 updates linked; held_out the same. Refitting the aspect model with rounds 12-13 cost
  held_out a link (0.970 -> 0.955) and the chatter held-out a false key (0.120 -> 0.130), so the shipped weights
  stayed. held_out_6 (94 pairs, a river delta town, varied registers, written blind) was then run with the final
  code: link 0.914/0.533, key 0.727/0.629; with the refitted weights (not chosen): 0.946/0.583. Final: held_out
  1.000/0.970, held_out_2 0.981/0.883, held_out_3 0.982/0.900, held_out_4 0.984/0.838, held_out_5 0.925/0.569.
- Then three more tuning rounds (a001-a120, b001-b120, e001-e120: 360 pairs, a harbour town, a fantasy game log, a
  farming life-sim) were written by helpers from the vocabulary and two example pairs, and held_out_7 (a desert
  caravan town) beside them, blind. The shipped weights linked 216 of the 345 updates of the five newest tuning
  rounds; refits leaving each round out in turn linked 236 of them (false links 5 against 6), held_out 62-63 of
  66 against 64. The aspect model was refitted on every tuning round. Final: tuning 0.993/0.878, held_out
  1.000/0.939, held_out_2 0.982/0.900, held_out_3 0.981/0.883, held_out_4 0.984/0.838, held_out_5 0.950/0.585,
  held_out_6 0.927/0.633 (its third run), held_out_7 0.949/0.661 (run once); chatter held-out no-state lines
  given a key 0.120 -> 0.141, key recall 0.714 -> 0.738; LoCoMo hybrid r@5 0.6972 -> 0.6966 (one question).
- Three further tuning rounds (d, g, f: a space colony, a castle household, a city life-sim) and held_out_8 (a
  1920s port city, blind) were written the same way. Leaving each new round out of a refit linked 153 of its 250
  updates, as the shipped weights did, so the weights stayed. held_out_8, run once: link 0.912/0.517, key
  0.674/0.634. Tuning with those rounds: 0.988/0.816.
- held_out_9 (a travelling circus, blind) was written the same way and run once with that code: link
  0.946/0.583, key 0.744/0.732. A pairwise "does the newer memory replace a held one" classifier was tried as a
  second chance (leave-one-round-out on tuning only): unseen rounds d+g+f 0.612 -> 0.688 recall, precision
  0.962 -> 0.945 (0.879 -> 0.847 with the NPC's other held keys offered too); not taken
  (scripts/research_pairwise_keys.py).
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-embed", action="store_true", help="cue words and types only (no embedder)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks", help="folder for state_keys.{md,json}")
    parser.add_argument("--split", action="append", help="tuning, held_out, held_out_2 ... held_out_5 (default: all)")
    args = parser.parse_args(argv)
    data = load_pairs(PAIRS)
    splits = args.split or list(dict.fromkeys(pair["split"] for pair in data["pairs"]))
    with tempfile.TemporaryDirectory() as folder, Env.local(folder, environ={}, embed_model=MINILM) as env:
        embed = None if args.no_embed else env.embedder.embed
        results = {split: measure(data, split, embed) for split in splits}
    model = "none (cue words and types)" if args.no_embed else MINILM
    name = "state_keys_no_embed" if args.no_embed else "state_keys"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{name}.md").write_text(report(results, model) + HISTORY, "utf-8")
    payload = {"model": model, "splits": {split: {**f.summary(), "misses": f.misses if split in MISSES_SHOWN else None}
                                          for split, f in results.items()}}
    (args.out / f"{name}.json").write_text(json.dumps(payload, indent=1) + "\n", "utf-8")
    for split, figures in results.items():
        print(split, json.dumps(figures.summary()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
