"""The staff dashboard in a real browser: charts drawn with the vendored Chart.js and the
same numbers as tables, the period switched, a figure (a table's link, a chart's bar)
followed to its runs; screenshots in both themes on a desktop and a phone."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests import processes
from tests.browser.conftest import PASSWORD, LiveServer, each_look, log_in

pytestmark = pytest.mark.browser
STAFF = "dash-staff"


@pytest.fixture(scope="module")
def seeded(daphne_server: LiveServer) -> LiveServer:
    """The live server's database with 800 made-up runs and a staff account (once: xdist
    may hand this module's tests to a worker in turns, setting this up again)."""
    there = (
        "from django.contrib.auth.models import User; "
        f"print(User.objects.filter(username={STAFF!r}).exists())"
    )
    if processes.shell(there, env=daphne_server.env).stdout.strip() == "True":
        return daphne_server
    done = processes.manage("seed_runs", "800", "--no-measure", env=daphne_server.env)
    assert done.returncode == 0, done.stderr
    code = (
        "from django.contrib.auth.models import User; "
        f"User.objects.create_user({STAFF!r}, password={PASSWORD!r}, is_staff=True)"
    )
    made = processes.shell(code, env=daphne_server.env)
    assert made.returncode == 0, made.stderr
    return daphne_server


def test_staff_read_the_dashboard_switch_period_and_follow_a_figure(
    page: Any, seeded: LiveServer, tmp_path: Path
) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(page, seeded.url, STAFF)
    page.click("#account-button")
    page.get_by_role("link", name="Dashboard").click()
    page.wait_for_url(f"{seeded.url}/dashboard/")

    expect(page.get_by_role("heading", name="Dashboard", level=1)).to_be_visible()
    expect(page.locator(".period-picker [aria-current=page]")).to_have_text("7 days")
    canvases = page.locator("canvas[data-chart]")
    expect(page.locator("html")).to_have_attribute("data-charts-drawn", str(canvases.count()))
    assert canvases.count() == 7
    assert page.evaluate("Object.keys(Chart.instances).length") == 7
    reasons = page.locator("#reasons tbody tr")
    expect(reasons.first).to_contain_text("Completed")
    assert reasons.count() >= 5

    page.locator(".period-picker").get_by_role("link", name="30 days").click()
    page.wait_for_url(re.compile(r"\?period=30d$"))
    expect(page.locator(".dash-head p")).to_contain_text("Runs started in the last 30 days")
    expect(page.locator(".dash-card-figure").first).to_have_text("800")

    page.locator("#limit-hits summary").click()  # the hours' table comes when opened
    expect(page.locator("#limit-hits .hours-table tbody tr").first).to_be_visible()

    _screenshots(page, "dashboard", tmp_path)

    no_progress = page.locator("#reasons tbody tr", has_text="No progress").locator("a")
    count = int(no_progress.inner_text().replace(",", ""))
    no_progress.click()
    page.wait_for_url(re.compile(r"/dashboard/runs/\?period=30d&reason=no_progress"))
    rows = page.locator(".run-row")
    expect(rows.first).to_be_visible()
    assert rows.count() == min(count, 50)
    expect(page.locator(".dash-head p")).to_contain_text(f"{count} run")
    assert all(text == "No progress" for text in rows.locator(".badge").all_inner_texts())
    patterns = page.locator(".pattern-row .pattern")
    assert patterns.count() == rows.count()
    assert all(text.strip() for text in patterns.all_inner_texts())
    assert "Seeded question." not in page.content()  # never the users' messages

    _screenshots(page, "dashboard-runs", tmp_path)
    assert errors == []


def test_a_bar_of_a_chart_opens_its_runs(page: Any, seeded: LiveServer) -> None:
    log_in(page, seeded.url, STAFF)
    page.goto(f"{seeded.url}/dashboard/?period=30d")
    canvas = page.locator("canvas[data-chart=reasons]")
    expect(page.locator("html")).to_have_attribute("data-charts-drawn", "7")
    # The first bar (the most frequent reason): a point inside it, from the chart itself.
    x, y, label = canvas.evaluate(
        """canvas => {
          const chart = Chart.getChart(canvas);
          const bar = chart.getDatasetMeta(0).data[0];
          return [(bar.base + bar.x) / 2, bar.y, chart.data.labels[0]];
        }"""
    )
    box = canvas.bounding_box()
    page.mouse.click(box["x"] + x, box["y"] + y)
    page.wait_for_url(re.compile(r"/dashboard/runs/\?period=30d&reason="))
    expect(page.locator(".run-row .badge").first).to_have_text(label)


# The main column scrolls inside the window: unrolled, a full-page screenshot holds it all.
UNROLL = "html, body { height: auto !important; } .main { overflow: visible !important; }"


def _screenshots(page: Any, name: str, tmp_path: Path) -> None:
    # A stylesheet of the test's own, which the page's Content-Security-Policy would refuse
    # as a <style>: put in through the CSS object model, which the policy leaves alone.
    unroll = page.evaluate_handle(
        """css => {
          const sheet = new CSSStyleSheet();
          sheet.replaceSync(css);
          document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
          return sheet;
        }""",
        UNROLL,
    )
    for folder, look in each_look(page, tmp_path):  # the charts redraw at each size
        page.screenshot(path=str(folder / f"{name}-{look}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
    unroll.evaluate(
        "sheet => { document.adoptedStyleSheets = "
        "document.adoptedStyleSheets.filter(s => s !== sheet); }"
    )
