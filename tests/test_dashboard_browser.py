"""The dashboard in a real browser (issues 17, 42): `vcloud dashboard` serves the page on localhost and Debian's
headless Chromium loads it at 1440x900. Step advances the model and the charts take the change; Play runs to the
end and stops by itself (Play and Step disabled, Reset enabled); Reset starts again; the chart labels are at least
12 px (computed in the DOM); `--run` opens on the finished run and the time slider answers the first click.
Needs /usr/bin/chromium (`apt-get install chromium`; .ci/run installs it)."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from scenarios.cli import main

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's Chromium at /usr/bin/chromium: apt-get install chromium"
)
ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SMALL = ["flexslot", "--set", "scale=0.03"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(args: list[str], log_path: Path):
    """`vcloud dashboard ARGS` on a free localhost port, once it answers."""
    port = _free_port()
    log = log_path.open("w")
    cmd = [sys.executable, "-m", "scenarios.cli", "dashboard", *args, "--port", str(port)]
    server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return server, log, url
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail(f"the dashboard did not start: {log_path.read_text()[-2000:]}")
            time.sleep(0.3)


@pytest.fixture
def serve(tmp_path):
    started = []

    def start(args: list[str]) -> str:
        server, log, url = _serve(args, tmp_path / f"server{len(started)}.log")
        started.append((server, log))
        return url

    yield start
    for server, log in started:
        server.terminate()
        server.wait(timeout=20)
        log.close()


def _browser(p):
    return p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)


def _seqs(page) -> list[int]:
    return [int(s) for s in page.locator(".vcloud-vega").evaluate_all("els => els.map(e => e.dataset.seq || -1)")]


def test_step_play_to_the_end_and_reset(serve, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    url = serve(SMALL)
    with sync_playwright() as p:
        browser = _browser(p)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(url, timeout=60_000)
        summary = page.locator(".vcloud-summary")
        expect(summary).to_have_text(re.compile(r"^t = 0 s · makespan so far - · kills 0"), timeout=60_000)
        expect(page.locator(".vcloud-model")).to_have_text("flexslot, seed 1, 30 simulated s per step")
        page.get_by_role("button", name="Step").click()
        expect(summary).to_have_text(re.compile(r"^t = 30 s · makespan so far 30 s · "), timeout=30_000)
        expect(page.locator(".vcloud-vega svg").first).to_be_visible(timeout=30_000)
        page.get_by_role("button", name="Step").click()
        expect(summary).to_have_text(re.compile(r"^t = 60 s "), timeout=30_000)
        page.wait_for_function("() => [...document.querySelectorAll('.vcloud-vega')].every(e => +e.dataset.seq >= 1)",
                               timeout=20_000)  # fmt: skip
        # readable: every axis and legend label of the charts is drawn at 12 px or more
        sizes = page.locator(".vcloud-vega svg text").evaluate_all(
            "ts => ts.filter(t => t.textContent.trim()).map(t => parseFloat(getComputedStyle(t).fontSize))"
        )
        assert len(sizes) > 100 and min(sizes) >= 12, sorted(sizes)[:5]
        title = page.locator(".vcloud-panel .v-card__title").first
        assert float(title.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 16
        page.get_by_role("button", name="Play").click()
        expect(summary).to_have_text(re.compile(r"· finished$"), timeout=90_000)
        expect(page.get_by_role("button", name="Play")).to_be_disabled(timeout=10_000)
        expect(page.get_by_role("button", name="Step")).to_be_disabled()
        page.screenshot(path=tmp_path / "finished.png")
        page.get_by_role("button", name="Reset").click()
        expect(summary).to_have_text(re.compile(r"^t = 0 s "), timeout=30_000)
        expect(page.get_by_role("button", name="Step")).to_be_enabled()
        page.get_by_role("button", name="Step").click()
        expect(summary).to_have_text(re.compile(r"^t = 30 s "), timeout=30_000)
        browser.close()


def test_run_directory_opens_at_its_end_and_the_slider_answers_the_first_click(serve, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    out = tmp_path / "run"
    assert main(["run", *SMALL, "--out", str(out), "--quiet"]) == 0
    url = serve(["--run", str(out)])
    with sync_playwright() as p:
        browser = _browser(p)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(url, timeout=60_000)
        summary = page.locator(".vcloud-summary")
        expect(summary).to_have_text(re.compile(r"jobs done 1/1 .*· finished$"), timeout=60_000)
        expect(page.locator(".vcloud-vega svg").first).to_be_visible(timeout=30_000)
        end = int(re.match(r"t = ([\d,]+) s", summary.inner_text()).group(1).replace(",", ""))
        slider = page.locator(".vcloud-time .v-slider")
        box = slider.bounding_box()
        page.mouse.click(box["x"] + box["width"] * 0.25, box["y"] + box["height"] / 2)  # one click, a quarter in
        expect(summary).not_to_have_text(re.compile(r"· finished$"), timeout=20_000)
        t = int(re.match(r"t = ([\d,]+) s", summary.inner_text()).group(1).replace(",", ""))
        assert 0.1 * end < t < 0.4 * end
        expect(page.get_by_role("button", name="Play")).to_be_enabled()
        browser.close()
