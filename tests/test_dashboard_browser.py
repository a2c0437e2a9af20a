"""The dashboard in a real browser (issue 17): `vcloud dashboard` serves the page on localhost, Debian's headless
Chromium loads it, every panel renders, a control is changed, Reset rebuilds the model, Step advances it and the
values on the page change. Needs /usr/bin/chromium (`apt-get install chromium`; .ci/run installs it)."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium: apt-get install chromium"
)
PANELS = ("vcloud-heat-map", "vcloud-nodes", "vcloud-VMs", "vcloud-jobs")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dashboard(tmp_path):
    """`vcloud dashboard flexslot --set scale=0.1` on a free localhost port; stopped after the test."""
    port = _free_port()
    log = (tmp_path / "server.log").open("w")
    cmd = [sys.executable, "-m", "scenarios.cli", "dashboard", "flexslot", "--set", "scale=0.1", "--port", str(port)]
    server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail(f"the dashboard did not start: {(tmp_path / 'server.log').read_text()[-2000:]}")
            time.sleep(0.3)
    yield url
    server.terminate()
    server.wait(timeout=20)
    log.close()


def test_page_renders_every_panel_and_steps_after_a_reset_with_a_new_control(dashboard, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1500, "height": 1300})
        page.goto(dashboard, timeout=60_000)
        summary, described = page.locator(".vcloud-summary"), page.locator(".vcloud-model")
        expect(summary).to_have_text(re.compile(r"^t = 0 s · makespan so far - · kills 0"), timeout=60_000)
        expect(described).to_have_text("flexslot, seed 1, 30 simulated s per step")
        for panel in PANELS:  # each panel's image is there and drawn
            image = page.locator(f"img.{panel}")
            expect(image).to_be_visible()
            assert image.evaluate("i => i.naturalWidth") > 400, panel
        heat_before = page.locator("img.vcloud-heat-map").get_attribute("src")

        seed = page.get_by_label("seed")  # change a control, then Reset rebuilds the model from it
        seed.fill("7")
        seed.press("Enter")
        page.get_by_role("button", name="Reset").click()
        expect(described).to_have_text("flexslot, seed 7, 30 simulated s per step", timeout=20_000)

        page.get_by_role("button", name="Step").click()
        expect(summary).to_have_text(re.compile(r"^t = 30 s · makespan so far 30 s · .* maps finished \d+"),
                                     timeout=30_000)  # fmt: skip
        page.get_by_role("button", name="Step").click()
        expect(summary).to_have_text(re.compile(r"^t = 60 s "), timeout=30_000)
        finished = int(re.search(r"maps finished (\d+)", summary.inner_text()).group(1))
        assert finished > 0  # the panels' data moved with the model
        assert page.locator("img.vcloud-heat-map").get_attribute("src") != heat_before
        page.screenshot(path=tmp_path / "dashboard.png", full_page=True)
        browser.close()
    assert (tmp_path / "dashboard.png").stat().st_size > 50_000
