"""How fast the inspector's pages load on a big village: 100 NPCs over 365 sim days (~220,000 memories).

    .venv/bin/python scripts/bench_inspector.py make DIR      # generate the folder (tens of minutes on 2 cores)
    .venv/bin/python scripts/bench_inspector.py time DIR      # time each page, served and in headless chromium

The folder: 3 to 9 memories per NPC per day; three NPCs (npc000-npc002) go through the memory system (their
important memories are embedded, by the hashing test embedder, and indexed), the others' rows are written to
D1 as a run leaves them (important ones marked indexed, older ones of them pruned), so the pages that read D1
see a full-size ledger; affinities drift daily (relationship_history).
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NPCS, DAYS = 100, 365
WORDS = "bread forge mill harvest rain market church pub river cow gossip letter fever apple roof wedding".split()


def make(folder: Path) -> None:
    from memory_sim.env import Env
    from memory_sim.memory import npcs as registry
    from memory_sim.memory.ledger import store
    from memory_sim.memory.models import ShortTermMemory, WorldTime
    from memory_sim.memory.system import MemorySystem
    from memory_sim.sim.driver import history_rows, relationship_rows

    rng, ids, day = random.Random(1), [f"npc{i:03d}" for i in range(NPCS)], [0]
    with Env.local(folder, embed_model="fake/hashing", serve_owner=False) as env:
        system = MemorySystem(env, clock=lambda: day[0] * 86400.0 + 23 * 3600)
        registry.register_many(env.DB, [registry.make(i, f"Villager {i[3:]}", rng.choice(["baker", "smith", "miller"]),
                                                      (), ()) for i in ids])
        affinity = {(a, b): round(rng.uniform(-0.3, 0.6), 3) for a in ids for b in ids if a != b}
        for d in range(DAYS):
            day[0] = d
            batch = [ShortTermMemory(npc, f"Day {d}: {npc} saw {other} at the {rng.choice(WORDS)} talking of the "
                                          f"{rng.choice(WORDS)} and the {rng.choice(WORDS)} ({k}).",
                                     round(rng.uniform(0.05, 0.95), 2), WorldTime(d, 7 + k),
                                     rng.choice(["event", "relationship", "opinion", "place"]), (other,))
                     for npc in ids for k in range(rng.randint(3, 9)) for other in [rng.choice(ids)]]
            system.remember_many([m for m in batch if m.npc_id in ids[:3]])
            rest = [m for m in batch if m.npc_id not in ids[:3]]
            states = {m.id: "unindexed" if d < 300 and m.importance < 0.8 else "indexed"
                      for m in rest if m.importance > 0.7}
            env.DB.batch(store.insert_memories(env.DB, rest, 0.05 + 0.002 * (DAYS - 1 - d), states))
            changed = {}
            for _ in range(150):
                a, b = rng.choice(ids), rng.choice(ids)
                if a != b:
                    affinity[(a, b)] = round(max(-1.0, min(1.0, affinity[(a, b)] + rng.uniform(-0.08, 0.08))), 3)
                    changed[(a, b)] = affinity[(a, b)]
            rows = sorted(affinity.items()) if d == 0 else sorted(changed.items())
            last = d % 30 == 0 or d == DAYS - 1
            env.DB.batch(history_rows(env.DB, rows, d)
                         + (relationship_rows(env.DB, sorted(affinity.items()), d) if last else []))
            if d % 10 == 0:
                print(f"day {d}", flush=True)
        store.set_meta(env.DB, "world_seconds", repr((DAYS - 1) * 86400.0 + 23 * 3600))


PAGES = {
    "village": "/ui/",
    "village search": "/ui/?q=villager 04",
    "npc (indexed)": "/ui/npcs/npc000",
    "npc": "/ui/npcs/npc050",
    "recall (weighted hybrid)": "/ui/recall?" + urlencode({"npc": "npc000", "q": "What does npc000 think of npc007?",
                                                           "weighted": "true"}),
    "relationships": "/ui/relationships",
    "relationships day 100, a pair": "/ui/relationships?day=100&a=npc001&b=npc002",
    "health": "/ui/health",
}


def time_pages(folder: Path, repeats: int = 3) -> None:
    import httpx

    from memory_sim.inspector import Access, Folder, create_app
    from memory_sim.server.loopback import LoopbackServer
    from memory_sim.settings import Settings

    inspected, access = Folder(Settings.load(environ={}, data_dir=folder)), Access()
    token = {"Authorization": f"Bearer {access.token}"}
    with LoopbackServer(create_app(inspected, access)) as server:
        base = f"http://127.0.0.1:{server.port}"
        started = time.perf_counter()
        httpx.get(f"{base}/ui/api/health", timeout=120, headers=token)
        print(f"opening the folder (first request): {time.perf_counter() - started:.2f} s")
        print("| page | served (median of 3) | HTML | in chromium (load event, median of 3) |\n|---|---|---|---|")
        driver = _browser()
        if driver is not None:
            driver.get(f"{base}/ui/?token={access.token}")  # the printed URL: the token becomes a cookie
        for name, page in PAGES.items():
            served, loaded, size = [], [], 0
            for _ in range(repeats):
                started = time.perf_counter()
                response = httpx.get(base + page, timeout=120, headers=token)
                served.append(time.perf_counter() - started)
                size = len(response.content)
                assert response.status_code == 200, response.text[:300]
                if driver is not None:
                    driver.get(base + page)
                    loaded.append(driver.execute_script(
                        "const t = performance.getEntriesByType('navigation')[0]; return t.loadEventEnd;") / 1000)
            browser = f"{statistics.median(loaded):.2f} s" if loaded else "no chromium"
            print(f"| {name} | {statistics.median(served):.2f} s | {size / 1024:.0f} KiB | {browser} |", flush=True)
        if driver is not None:
            driver.quit()
    inspected.close()


def _browser() -> object | None:
    import shutil

    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or chromedriver is None:
        return None
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    # --no-sandbox: Chromium's sandbox refuses to start as root (containers, CI); as a plain user it may be dropped
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,800"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(chromedriver), options=options)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("make", "time"):
        sys.exit(__doc__)
    (make if sys.argv[1] == "make" else time_pages)(Path(sys.argv[2]))
