"""Reports in a real browser: screenshots (``make shots``) and the checks ``tests/reporting/test_browser.py`` makes.

Drives Debian's Chromium (``/usr/bin/chromium``) through Playwright's Python package (Playwright's own browser
download is not used). ``python -m evallab.reporting._shots [REPORTS_DIR]`` saves a full-page screenshot of
``index.html`` and every report at 1280 px to ``REPORTS_DIR/shots/`` and prints what :func:`page_problems` finds.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

CHROMIUM = os.environ.get("EVALLAB_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WIDTH = 1280

#: an absolute machine path in visible text (a file under a home, temp, work or system folder)
ABS_PATH = re.compile(r"(?<![\w.~:/])/(?:home|root|tmp|work|Users|usr|opt|var|private|mnt|srv)/[\w.+@-]")

_REPR = re.compile(r"\b(?:Posix|Windows)?Path\('[^']*'\)|<[\w.]+ object at 0x[0-9a-f]+>")

_JS = """() => {
  const doc = document.documentElement;
  const scrollers = [];
  for (const el of document.querySelectorAll('body *')) {
    const cs = getComputedStyle(el);
    if (['auto', 'scroll'].includes(cs.overflowX) && el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0) {
      scrollers.push((el.className || el.tagName).toString().slice(0, 80) + ' ' + el.scrollWidth + '>' + el.clientWidth);
    }
  }
  const stderr = [...document.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"], .output_stderr')]
      .map(e => e.innerText.trim()).filter(t => t.length);
  const imgs = [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src.slice(0, 60));
  const outs = [...document.querySelectorAll('.jp-OutputArea-output, .output_area')].map(e => e.innerText);
  const captions = [...document.querySelectorAll('table caption')].map(e => e.innerText.trim()).filter(t => t);
  return {scrollWidth: doc.scrollWidth, scrollers, stderr, brokenImages: imgs, text: document.body.innerText, captions,
          outputs: outs.length ? outs.join(' | ') : document.body.innerText};
}"""


def chromium_path() -> str | None:
    """The Chromium binary, or ``None`` when it is not installed."""
    if Path(CHROMIUM).exists():
        return CHROMIUM
    return shutil.which("chromium")


def launch(p):
    """A headless Chromium through Playwright ``p`` (``sync_playwright()``)."""
    return p.chromium.launch(executable_path=chromium_path(), args=ARGS, headless=True)


def page_problems(page, url: str) -> list[str]:
    """Open ``url`` at 1280 px and list what a reader would trip over: horizontal overflow, an element
    scrolling sideways, stderr output, "NaN", "Traceback", an absolute machine path, an image that did not load,
    a table shown twice (one caption twice: a cell's last ``show(...)`` echoed as its result) and a Python repr
    in an output (``PosixPath(...)``, ``<... object at 0x...>``: a return value the notebook did not mean to show)."""
    page.set_viewport_size({"width": WIDTH, "height": 900})
    page.goto(url, wait_until="load")
    r = page.evaluate(_JS)
    problems = []
    if r["scrollWidth"] > WIDTH:
        problems.append(f"page wider than {WIDTH} px: {r['scrollWidth']}")
    problems += [f"scrolls sideways: {s}" for s in r["scrollers"]]
    problems += [f"stderr output: {s[:120]!r}" for s in r["stderr"]]
    text = r["text"]
    for word, where in (("NaN", r["outputs"]), ("Traceback", text)):
        # "NaN" is looked for in what the notebook computed (outputs; the whole page for the index), not in the
        # authors' prose, which may explain when a value is undefined
        if re.search(rf"\b{word}\b", where):
            i = where.index(word)
            problems.append(f"{word!r} in the text: …{where[max(0, i - 60):i + 40]!r}")
    m = ABS_PATH.search(text)
    if m:
        problems.append(f"absolute path in the text: …{text[max(0, m.start() - 40):m.end() + 40]!r}")
    problems += [f"image not loaded: {s}" for s in r["brokenImages"]]
    caps = r.get("captions") or []
    problems += [f"table shown twice: {c[:80]!r}" for c in sorted({c for c in caps if caps.count(c) > 1})]
    m = _REPR.search(r["outputs"])
    if m:
        problems.append(f"a Python repr in an output: {m.group(0)[:80]!r}")
    return problems


def pages(reports: Path) -> list[Path]:
    """``index.html`` and every report HTML in ``reports`` (not the screenshots)."""
    return sorted(p for p in reports.glob("*.html"))


def main(argv: list[str]) -> int:
    from playwright.sync_api import sync_playwright

    reports = Path(argv[0]) if argv else Path("reports")
    shots = reports / "shots"
    shots.mkdir(parents=True, exist_ok=True)
    if chromium_path() is None:
        print("chromium is not installed (apt-get install -y chromium)", file=sys.stderr)
        return 2
    bad = 0
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        for f in pages(reports):
            problems = page_problems(page, f.resolve().as_uri())
            page.screenshot(path=str(shots / f"{f.stem}.png"), full_page=True)
            bad += bool(problems)
            print(f"{'ok  ' if not problems else 'FAIL'} {f.name} -> {shots / (f.stem + '.png')}")
            for pr in problems:
                print(f"     {pr}")
        browser.close()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
