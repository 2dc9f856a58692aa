"""The labelling page in headless Chromium: an annotator labels 10 items by keyboard, the server is killed
(SIGKILL) and restarted, the page resumes at item 11, and the file holds the 10 labels with their shown orders;
a request without the token is refused (403) and writes nothing. Skipped only when Chromium is not installed
(``apt-get install -y chromium``; ``.ci/run`` installs it)."""

from __future__ import annotations

import httpx
import pandas as pd
import pytest
from label_helper import kill, pairwise_items, start

from evallab.reporting._shots import chromium_path

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(chromium_path() is None,
                                 reason="Chromium is not installed at /usr/bin/chromium "
                                        "(apt-get install -y chromium; .ci/run installs it)")]


def _wait_progress(page, handled: int, total: int) -> None:
    page.wait_for_function(f"document.getElementById('progress').textContent.endsWith('{handled} / {total}')",
                           timeout=10_000)


def test_label_ten_kill_restart_resume(tmp_path):
    pw = pytest.importorskip("playwright.sync_api")
    from evallab.reporting._shots import launch

    items, out = pairwise_items(tmp_path / "items.csv", 20), tmp_path / "labels.csv"
    keys = ["1", "2", "1", "t", "2", "ArrowLeft", "ArrowRight", "n", "1", "2"]
    choice = {"1": "left", "ArrowLeft": "left", "2": "right", "ArrowRight": "right", "t": "tie", "n": "not_sure"}
    shown = []  # (item id, left text) as the page showed them
    proc, url = start(items, out, "ann")
    with pw.sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        try:
            page.goto(url)
            _wait_progress(page, 0, 20)
            assert "gold" not in page.content() and "first output 0" in page.content()
            for k, key in enumerate(keys):
                item = page.locator("#item").get_attribute("data-item-id")
                assert item == f"q{k:02d}"
                shown.append((item, page.locator(".cols pre").first.inner_text()))
                page.keyboard.press(key)
                _wait_progress(page, k + 1, 20)
            kill(proc)
            proc, url = start(items, out, "ann")
            page.goto(url)
            _wait_progress(page, 10, 20)
            assert page.locator("#item").get_attribute("data-item-id") == "q10"  # item 11
            assert "Instruction 10" in page.locator("#item").inner_text()
            # without the token: 403, and nothing written
            before = out.read_bytes()
            base = url.split("?")[0]
            assert httpx.get(base).status_code == 403
            r = httpx.post(base + "api/act", json={"action": "label", "item_id": "q10", "choice": "left"})
            assert r.status_code == 403
            assert page.request.get(base).status == 403
            assert out.read_bytes() == before
        finally:
            browser.close()
            kill(proc)
    rows = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert len(rows) == 10 and set(rows["action"]) == {"label"} and set(rows["annotator"]) == {"ann"}
    assert list(rows["item_id"]) == [f"q{k:02d}" for k in range(10)]
    for (item, left), key, (_, r) in zip(shown, keys, rows.iterrows(), strict=True):
        # the order recorded is the order shown: output 1 on the left exactly when the order is ab
        assert r["order"] == ("ab" if left.startswith("first") else "ba"), item
        c = choice[key]
        expected = {"tie": "tie", "not_sure": "not_sure"}.get(c) or (
            "1" if (c == "left") == (r["order"] == "ab") else "2")
        assert r["label"] == expected, item
