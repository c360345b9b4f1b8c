"""The report as a person sees it: opened in headless Chromium (Debian's ``chromium``).

The page is loaded with a small probe appended (a copy; the report itself has no script): on
``load`` it records JavaScript errors and console errors, and whether every image decoded, in
the DOM that Chromium then dumps. Skipped when Chromium is not installed (``.ci/run`` installs
it).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from test_aggregate import write_study

from oscbo import aggregate, figures, report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")

PROBE = """
<script>
window.__errors = [];
window.addEventListener("error", (event) => window.__errors.push("error: " + event.message));
const consoleError = console.error;
console.error = (...args) => { window.__errors.push("console: " + args.join(" ")); consoleError(...args); };
window.addEventListener("load", () => {
  const images = Array.from(document.images);
  const broken = images.filter((image) => !(image.complete && image.naturalWidth > 0)).length;
  const probe = document.createElement("pre");
  probe.id = "probe";
  probe.textContent = `images=${images.length} broken=${broken} errors=${window.__errors.length} ` +
    window.__errors.join(" | ");
  document.body.appendChild(probe);
});
</script>
"""


def render_in_chromium(page: Path) -> tuple[str, str]:
    """The DOM after load and Chromium's log."""
    result = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
         "--virtual-time-budget=10000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout, result.stderr


def test_report_renders_with_every_image_and_no_errors(tmp_path: Path) -> None:
    paths = write_study(tmp_path / "runs")
    aggregate.aggregate(paths, tmp_path / "summary")
    provenance = {"date": "2026-01-01", "git_commit": "abc", "config_hash": "0123",
                  "versions": {"numpy": np.__version__}, "hardware": {"machine": "x86_64"}}
    described = figures.make_figures(tmp_path / "summary", tmp_path / "figures", provenance)
    config = {"experiments": {"exp": {"description": "browser test", "seeds": 2, "n_init": 3, "budget": 6}}}
    html = report.render_report(tmp_path / "summary", described, config, provenance, [], tmp_path / "index.html")
    probed = tmp_path / "probed.html"
    probed.write_text(html.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")

    dom, log = render_in_chromium(probed)
    probe = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert probe, "the page never finished loading"
    images, broken, errors = map(int, re.match(r"images=(\d+) broken=(\d+) errors=(\d+)", probe.group(1)).groups())
    assert images == len(described) and broken == 0 and errors == 0, probe.group(1)
    assert "Uncaught" not in log
