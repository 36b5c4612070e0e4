"""The page around the figures: the period picked in the query string, the hours table
loaded when opened, the place for ops' alerts."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import User
from django.template.loader import render_to_string
from django.test import Client
from django.utils import timezone

from dashboard.selectors import open_alerts
from tests.dashboard.conftest import make_run

pytestmark = pytest.mark.django_db


def test_the_period_comes_from_the_query_string(staff_client: Client, alice: User) -> None:
    make_run(alice, ago=timedelta(days=3))
    assert "Runs started in the last 7 days" in staff_client.get("/dashboard/").content.decode()
    day = staff_client.get("/dashboard/?period=24h").content.decode()
    assert "Runs started in the last 24 hours" in day
    assert '<span class="dash-card-figure">0</span>' in day
    month = staff_client.get("/dashboard/?period=30d").content.decode()
    assert '<span class="dash-card-figure">1</span>' in month


def test_an_unknown_period_is_a_clear_400(staff_client: Client) -> None:
    response = staff_client.get("/dashboard/?period=1y")
    assert response.status_code == 400
    page = response.content.decode()
    assert (
        "There is no period &#x27;1y&#x27;: choose 24h (24 hours), 7d (7 days), 30d (30 days)."
        in page
    )
    assert 'href="/dashboard/?period=30d"' in page  # the way back
    assert "dashboard-charts" not in page


def test_the_hours_table_comes_as_a_part_or_a_page(staff_client: Client, alice: User) -> None:
    make_run(alice, reason="timeout", ago=timedelta(hours=2))
    make_run(alice, reason="completed", ago=timedelta(hours=3))
    part = staff_client.get("/dashboard/hours/?period=24h", HTTP_HX_REQUEST="true")
    html = part.content.decode()
    assert "<html" not in html
    assert html.count("<tr>") == 2  # the head and the one hour with a hit
    assert "&amp;hour=" in html and "reason=limit" in html
    page = staff_client.get("/dashboard/hours/?period=24h").content.decode()
    assert "<html" in page and "Limit hits per hour" in page
    assert staff_client.get("/dashboard/hours/?period=soon").status_code == 400


def test_open_alerts_show_until_acknowledged(staff_client: Client, staff: User) -> None:
    from ops.models import Alert

    assert open_alerts() == []
    assert "dash-alerts" not in staff_client.get("/dashboard/").content.decode()
    start = timezone.now().replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    alert = Alert.objects.create(
        kind="spend", window_start=start, window_end=start + timedelta(hours=1),
        title="Spend passed $10.00 in an hour", detail="$12.40 from 14:00 to 15:00 UTC",
        value=12.4, threshold=10,
    )  # fmt: skip
    page = staff_client.get("/dashboard/?period=24h").content.decode()
    assert "Spend passed $10.00 in an hour" in page and "$12.40 from 14:00" in page
    assert f'action="/dashboard/alerts/{alert.pk}/ack/"' in page

    response = staff_client.post(f"/dashboard/alerts/{alert.pk}/ack/", {"period": "24h"})

    assert response.status_code == 302 and response["Location"] == "/dashboard/?period=24h"
    alert.refresh_from_db()
    assert alert.acknowledged_at is not None and alert.acknowledged_by == staff
    assert "dash-alerts" not in staff_client.get("/dashboard/").content.decode()
    assert staff_client.post("/dashboard/alerts/999/ack/").status_code == 404


def test_the_alerts_part_lists_each_with_acknowledge() -> None:
    alert = SimpleNamespace(
        pk=7, title="Spend passed $10 in an hour", detail="$12.40 since 14:00",
        created_at=timezone.now(),
    )  # fmt: skip
    html = render_to_string(
        "dashboard/_alerts.html", {"alerts": [alert], "period": SimpleNamespace(key="24h")}
    )
    assert "Spend passed $10 in an hour" in html and "$12.40 since 14:00" in html
    assert 'action="/dashboard/alerts/7/ack/"' in html
    assert ">Acknowledge</button>" in html
