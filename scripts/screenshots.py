"""Regenerates the inspector screenshots the README shows (docs/img/inspector-*.png): a seeded village of 8
NPCs over 14 sim days (the demo's seed, the hashing test embedder: no model to load), the inspector on a
loopback port, and Debian's headless chromium at 1280x800 (run scripts/ensure-browser first).

    .venv/bin/python scripts/screenshots.py [--out docs/img]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory_sim.env import Env  # noqa: E402
from memory_sim.inspector import Access, Folder, create_app  # noqa: E402
from memory_sim.memory.system import MemorySystem  # noqa: E402
from memory_sim.server.loopback import LoopbackServer  # noqa: E402
from memory_sim.settings import Settings  # noqa: E402
from memory_sim.sim.clock import SimClock  # noqa: E402
from memory_sim.sim.driver import run_village  # noqa: E402
from memory_sim.sim.world import Village  # noqa: E402

PAGES = {  # file name -> page
    "inspector-npc.png": "/ui/npcs/margaret",
    "inspector-recall.png": "/ui/recall?" + urlencode({"npc": "margaret", "q": "What does Margaret think of Tom?",
                                                       "weighted": "true"}),
}


def seed(folder: Path, days: int) -> None:
    clock = SimClock()
    with Env.local(folder, embed_model="fake/hashing", serve_owner=False) as env:
        run_village(MemorySystem(env, clock=clock), Village(8, 7), clock, days)


def browser() -> object:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver is None:
        sys.exit("no chromium + chromedriver: run scripts/ensure-browser")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    # --no-sandbox: Chromium's sandbox refuses to start as root (containers, CI); as a plain user it may be dropped
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,800",
                     "--force-device-scale-factor=1", "--hide-scrollbars"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(driver), options=options)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    parser.add_argument("--days", type=int, default=14)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "village"
        seed(folder, args.days)
        inspected, access = Folder(Settings.load(environ={}, data_dir=folder)), Access()
        driver = browser()
        try:
            with LoopbackServer(create_app(inspected, access)) as server:
                driver.get(access.url("127.0.0.1", server.port, "/ui"))  # type: ignore[attr-defined]
                for name, page in PAGES.items():
                    driver.get(f"http://127.0.0.1:{server.port}{page}")  # type: ignore[attr-defined]
                    driver.save_screenshot(str(args.out / name))  # type: ignore[attr-defined]
                    print(args.out / name)
        finally:
            driver.quit()  # type: ignore[attr-defined]
            inspected.close()


if __name__ == "__main__":
    main()
