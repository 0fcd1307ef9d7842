"""The inspector as a person uses it, in a real headless Chromium (Debian's `chromium` and `chromium-driver`,
driven by Selenium): village -> Margaret -> the recall playground -> relationships -> health, with no console
error on any page and a screenshot of each (under $MEMORY_SIM_ARTEFACTS, else a temporary folder); and a folder
that `memory-sim run` advances, whose page moves on reload. `scripts/ensure-browser` installs the browser."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspector_helpers import CLI, QUESTION, Inspector, inspector, seed_village

from memory_sim.folder_lock import read_owner
from memory_sim.inspector.access import cookie_name
from memory_sim.memory.ledger import store
from memory_sim.memory.system import MemorySystem

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (the test extra)")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None or DRIVER is None,
                       reason="no chromium + chromedriver here (scripts/ensure-browser installs them)"),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,800", "--force-device-scale-factor=1"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("MEMORY_SIM_ARTEFACTS") or tmp_path_factory.mktemp("artefacts")) / "inspector"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def no_console_errors(driver: Any) -> None:
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, f"console errors on {driver.current_url}: {errors}"


def shot(driver: Any, artefacts: Path, name: str) -> None:
    no_console_errors(driver)
    assert driver.save_screenshot(str(artefacts / f"{name}.png"))


def by_css(driver: Any, css: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, css)


def wait_css(driver: Any, css: str, timeout_s: float = 20) -> Any:
    """The element, once the page a form or key press started loading shows it."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.wait import WebDriverWait

    shown = expected_conditions.presence_of_element_located((By.CSS_SELECTOR, css))
    return WebDriverWait(driver, timeout_s).until(shown)


def all_css(driver: Any, css: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, css))


def sign_in(driver: Any, inspector: Inspector) -> None:
    """Opens the URL the inspector prints at start, as its user would: the token becomes a cookie and leaves the
    address bar."""
    driver.get(f"{inspector.base}/ui/?token={inspector.token}")
    assert driver.current_url == f"{inspector.base}/ui/"
    assert driver.get_cookie(cookie_name(int(inspector.base.rsplit(":", 1)[1])))["httpOnly"] is True


def test_village_margaret_recall_relationships_and_health(ui: Inspector, browser: Any, artefacts: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    with ui.folder.env() as env:  # what the library recalls, to compare the page with
        seconds = store.world_seconds(env.DB)
        system = MemorySystem(env, clock=lambda: seconds)
        expected = system.weighted_recall("margaret", QUESTION, system.today())
        margaret_memories = store.count_memories(env.DB, "npc_id = 'margaret'")

    sign_in(browser, ui)
    assert len(all_css(browser, "#npcs tbody tr")) == 8
    shot(browser, artefacts, "village")
    search = by_css(browser, "input[name=q]")
    search.send_keys("marg", Keys.ENTER)  # the search box has the focus: type and press Enter
    wait_css(browser, "a[href$='/ui/']")  # the "Show all" link of a filtered list
    rows = all_css(browser, "#npcs tbody tr")
    assert len(rows) == 1 and "Margaret" in rows[0].text

    browser.find_element(By.LINK_TEXT, "Margaret").click()
    assert by_css(browser, "#npc-name").text.startswith("Margaret")
    dots = all_css(browser, "#timeline circle.dot")
    assert len(dots) == margaret_memories > 0  # every memory, forgotten ones too
    assert all_css(browser, "#timeline line.consolidated")
    shot(browser, artefacts, "npc")

    browser.find_element(By.PARTIAL_LINK_TEXT, "recall playground").click()
    query = by_css(browser, "#query")
    query.send_keys(QUESTION)
    by_css(browser, "#weighted").click()
    query.send_keys(Keys.ENTER)
    wait_css(browser, "#results")
    results = all_css(browser, "#results tr.result")
    top = results[0]
    assert top.find_element(By.CSS_SELECTOR, "a.memory-id").get_attribute("data-id") == expected[0].id
    assert top.find_element(By.CSS_SELECTOR, "a.memory-id").text == expected[0].text
    for part in ("vector", "keyword", "context", "score"):
        float(top.find_element(By.CSS_SELECTOR, f"td.{part}").text.replace("—", "0"))  # a number in each part
    formula = top.find_element(By.CSS_SELECTOR, "td.formula").text
    assert f"= {expected[0].effective_score:.4f}" in formula, formula
    shot(browser, artefacts, "recall")

    top.find_element(By.CSS_SELECTOR, "a.memory-id").click()  # its full record
    assert by_css(browser, "#content").text == expected[0].text and by_css(browser, "#d1-row")
    shot(browser, artefacts, "memory")

    browser.find_element(By.LINK_TEXT, "Relationships").click()
    edge = by_css(browser, "#edge-margaret-tom")
    title = edge.find_element(By.XPATH, "./*[local-name()='title']").get_attribute("textContent")
    assert "Margaret → Tom" in title and "Tom → Margaret" in title
    browser.get(f"{ui.base}/ui/relationships?a=margaret&b=tom")
    assert "Margaret and Tom over time" in by_css(browser, "#pair-title").text
    assert all_css(browser, "#pair-chart polyline.affinity") and all_css(browser, "#pair-memories tbody tr")
    shot(browser, artefacts, "relationships")

    browser.find_element(By.LINK_TEXT, "Health").click()
    by_css(browser, "#run-check").click()
    wait_css(browser, "#drift")
    assert by_css(browser, "#drift").text.startswith("Clean")
    shot(browser, artefacts, "health")


def test_the_pages_are_usable_from_the_keyboard(ui: Inspector, browser: Any) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    sign_in(browser, ui)
    browser.get(f"{ui.base}/ui/health")
    actions = ActionChains(browser)
    for _ in range(3):  # skip link, Village, Recall
        actions.send_keys(Keys.TAB)
    actions.perform()
    assert browser.switch_to.active_element.text == "Recall"
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    wait_css(browser, "#recall-form")
    assert browser.current_url.endswith("/ui/recall")  # the playground's first field
    no_console_errors(browser)
    browser.get(f"{ui.base}/ui/npcs/margaret")
    first_dot = all_css(browser, "#timeline a")[0]  # every dot is a link: Tab reaches it, Enter opens it
    memory_id = first_dot.get_dom_attribute("href").split("/ui/memories/")[1]
    browser.execute_script("arguments[0].focus()", first_dot)
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    wait_css(browser, "#d1-row")
    assert browser.current_url.endswith(f"/ui/memories/{memory_id}")
    browser.get(f"{ui.base}/ui/npcs/nobody")
    assert "no NPC 'nobody'" in by_css(browser, "#error").text
    logged = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert logged and all("404" in m for m in logged), logged  # the 404 itself is all it logs
    browser.get(f"{ui.base}/ui/")
    no_console_errors(browser)


def test_without_the_token_the_browser_sees_nothing(ui: Inspector, browser: Any) -> None:
    browser.delete_all_cookies()
    for path in ("/ui/", "/ui/npcs/margaret", "/ui/api/village"):
        browser.get(f"{ui.base}{path}")
        assert "Margaret" not in browser.page_source and "needs its token" in browser.page_source
    logged = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"
              and "/favicon.ico " not in e["message"]]  # asked for by the browser's own JSON viewer
    assert len(logged) == 3 and all("401" in m for m in logged), "\n".join(logged)  # the refusals are all it logs
    sign_in(browser, ui)
    assert len(all_css(browser, "#npcs tbody tr")) == 8
    no_console_errors(browser)


def wait_for_owner(folder: Path, process: subprocess.Popen[str], timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        owner = read_owner(folder)
        if owner is not None and owner.pid == process.pid and owner.address:
            return
        assert process.poll() is None, process.communicate()
        time.sleep(0.1)
    raise AssertionError("memory-sim run did not publish its address")


def world_day_shown(browser: Any) -> int:
    heading = by_css(browser, "#world-time").text  # "· world time day N HH:00"
    return int(heading.split("day ", 1)[1].split(" ", 1)[0])


def test_a_folder_that_memory_sim_run_advances_moves_on_reload(
    browser: Any, tmp_path: Path, artefacts: Path
) -> None:
    seed_village(tmp_path, npcs=4, days=2)
    run = subprocess.Popen([*CLI, "--data", str(tmp_path), "run", "--scale", "86400", "--for-seconds", "60"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_owner(tmp_path, run)
        with inspector(tmp_path) as live:
            sign_in(browser, live)
            assert f"read through the owner (pid {run.pid})" in by_css(browser, "header").text
            first = world_day_shown(browser)
            deadline, now = time.monotonic() + 30, first
            while now <= first and time.monotonic() < deadline:
                time.sleep(0.5)
                browser.refresh()
                now = world_day_shown(browser)
            assert now > first, f"the world day stayed at {first} while memory-sim run advanced it"
            recalled = live.json("/ui/api/recall", npc="margaret", q=QUESTION)  # the owner's index, its model
            assert recalled["results"] and "parts" in recalled["results"][0]
            browser.get(f"{live.base}/ui/health")
            assert all_css(browser, "#jobs tbody tr")  # the run's jobs, as it records them
            shot(browser, artefacts, "live-health")
    finally:
        run.send_signal(signal.SIGINT)
        try:
            run.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            run.kill()
            run.communicate()
