"""The review UI in a real headless Chromium (JavaScript off): every page renders, links lead where they say,
cited lines are marked, and markup from documents and proposals stays text. A screenshot of each page is kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from brain.brain import Brain
from tests.serve.browser import screenshot
from tests.serve.conftest import SECRETS
from tests.serve.test_proposals_http import canonical_ids, fact

pytestmark = pytest.mark.browser
HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\"><b>bold</b>"


def test_every_page_in_a_real_browser(corpus_brain: Path, tokens_file: Path, start_server: Any, browser: Any,
                                      tmp_path: Path) -> None:
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    server = start_server(corpus_brain, "--allow-propose", "--tokens", str(tokens_file), "--workers", "1")
    source = canonical_ids(corpus_brain)[0]
    proposal = fact(source, label=f"hostile {HOSTILE}", statement=f"Statement {HOSTILE}", subject=HOSTILE,
                    aliases=[HOSTILE])
    status, answer, _ = server.post("/v1/proposals", {"candidates": [proposal]})
    assert status == 200 and answer["committed"] == 1, answer
    shots = tmp_path / "screenshots"
    token = SECRETS["reader"]
    driver = browser

    def visit(path: str) -> None:
        separator = "&" if "?" in path else "?"
        driver.get(f"{server.url}{path}{separator}token={token}")
        assert driver.title != "pwned"  # the hostile text may be in the title, as text
        assert not driver.find_elements(By.CSS_SELECTOR, "main img[src='x'], main b, main script")
        try:
            alert = driver.switch_to.alert
            raise AssertionError(f"a page raised an alert: {alert.text}")
        except NoAlertPresentException:
            pass

    # Search: the form works without JavaScript; excerpts are highlighted; each hit carries its proof mark.
    visit("/ui/")
    box = driver.find_element(By.NAME, "q")
    box.send_keys("consistent hashing")
    driver.find_element(By.CSS_SELECTOR, "input[name=type][value=semantic]").click()
    driver.find_element(By.CSS_SELECTOR, "form.search button").click()
    WebDriverWait(driver, 30).until(lambda d: "q=" in d.current_url and d.find_elements(By.CSS_SELECTOR, ".hit"))
    assert "q=consistent+hashing" in driver.current_url and "type=semantic" in driver.current_url
    hits = driver.find_elements(By.CSS_SELECTOR, ".hit")
    assert hits and all(h.find_element(By.CSS_SELECTOR, ".type").text == "SEMANTIC" for h in hits)
    assert driver.find_elements(By.CSS_SELECTOR, ".hit mark")
    assert "verified proof" in hits[0].text
    screenshot(driver, shots, "search")

    # A block: fields, the evidence excerpt with its cited lines marked, provenance, the graph.
    hits[0].find_element(By.CSS_SELECTOR, "a").click()
    assert "/ui/blocks/" in driver.current_url
    assert driver.find_elements(By.CSS_SELECTOR, ".lines .cited")
    headings = [h.text for h in driver.find_elements(By.TAG_NAME, "h2")]
    assert {"Fields", "Evidence", "Provenance", "Supersession and demotion", "Dependents"} <= set(headings)
    graph = driver.find_element(By.CSS_SELECTOR, "img.graph")
    assert graph.size["width"] > 100  # the SVG loaded (a broken image is a small icon)
    screenshot(driver, shots, "block")

    # Its source, at the cited lines: the anchor exists and is marked.
    driver.find_element(By.CSS_SELECTOR, "h2 + p a").click()
    assert "/ui/sources/" in driver.current_url and "-L" in driver.current_url or "#L" in driver.current_url
    anchor = driver.current_url.rsplit("#", 1)[1]
    assert "cited" in driver.find_element(By.ID, anchor).get_attribute("class")
    screenshot(driver, shots, "source")

    # The branch the proposal made: incoming with the gate's verdict; the hostile text is shown as text.
    visit("/ui/branches")
    driver.find_element(By.LINK_TEXT, "proposals/claude").click()
    body = driver.find_element(By.TAG_NAME, "main").text
    assert "validated" in body and "<script>document.title='pwned'</script>" in body
    screenshot(driver, shots, "branch")
    visit("/ui/branches")
    screenshot(driver, shots, "branches")

    # The proposed block's own page (not served yet) shows its verified bytes, escaped.
    visit(f"/ui/blocks/{answer['results'][0]['block_id']}")
    assert "Not in the served snapshot" in driver.page_source and "onerror=" in driver.find_element(By.TAG_NAME,
                                                                                                     "main").text
    screenshot(driver, shots, "proposed-block")

    # A diff between the served head and the branch head.
    served = Brain.open(corpus_brain).snapshot_digest()
    visit(f"/ui/diff?a={served}&b={answer['snapshot']}")
    assert "+1 semantic" in driver.find_element(By.TAG_NAME, "main").text
    screenshot(driver, shots, "diff")

    # The provenance graph on its own.
    block = canonical_ids(corpus_brain)[0]
    visit(f"/ui/blocks/{block}/graph.svg")
    assert driver.find_elements(By.TAG_NAME, "svg") or "svg" in driver.page_source
    screenshot(driver, shots, "graph")

    # Without a token the UI is refused; a wrong one too.
    driver.get(f"{server.url}/ui/")
    assert "missing or wrong bearer token" in driver.page_source
    driver.get(f"{server.url}/ui/?token=wrong")
    assert "missing or wrong bearer token" in driver.page_source
    assert sorted(p.name for p in shots.iterdir()) == sorted(
        f"{n}.png" for n in ("search", "block", "source", "branch", "branches", "proposed-block", "diff", "graph"))
