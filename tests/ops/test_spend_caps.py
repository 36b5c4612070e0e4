"""Daily spending caps, per user and for the site: what is left of them becomes a run's
cost cap when it is claimed, and a cap used up ends the run at once (on the real stack)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import httpx
import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.config import OperatorLimits
from agents.state import AgentState
from agents.testing.fake_server import FakeServer
from chat.models import Conversation, Message, Role, Run, RunStatus
from ops.caps import run_cost_limits, site_spend_today, user_spend_today
from ops.models import SpendCaps
from runs.runner import claim
from tests.e2e.test_runs_api import start_conversation, wait_until_finished
from tests.stack import OracleStack

NOW = datetime(2026, 3, 2, 15, 5, tzinfo=UTC)
MIDNIGHT = datetime(2026, 3, 2, tzinfo=UTC)
PER_RUN = OperatorLimits(max_cost_usd=100.0)
ACCOUNT_CAP = "the daily spending cap for your account ($2.00)"
SITE_CAP = "the site's daily spending cap ($5.00)"


def spent(
    user: User,
    cost: float,
    *,
    started: datetime | None = NOW,
    finished: datetime | None = NOW,
) -> Run:
    conversation = Conversation.objects.create(owner=user)
    return Run.objects.create(
        conversation=conversation,
        status=RunStatus.FINISHED if finished else RunStatus.RUNNING,
        cost_usd=cost,
        started_at=started,
        finished_at=finished,
    )


def queued_run(user: User) -> Run:
    """A run waiting for a worker, from a new message (the claim's input)."""
    conversation = Conversation.objects.create(owner=user)
    message = Message.objects.create(
        conversation=conversation, seq=1, role=Role.USER, content="What is 2+2?"
    )
    return Run.objects.create(
        conversation=conversation, pending_action="start", user_message=message
    )


@pytest.fixture
def caps(db: None, settings: object) -> SpendCaps:
    """The staff's caps (none set) with no caps from the environment either."""
    settings.ORACLE_USER_DAILY_COST_USD = None  # type: ignore[attr-defined]
    settings.ORACLE_SITE_DAILY_COST_USD = None  # type: ignore[attr-defined]
    return SpendCaps.load()


def set_caps(caps: SpendCaps, *, user: str | None = None, site: str | None = None) -> None:
    caps.user_daily_cost_usd = Decimal(user) if user else None
    caps.site_daily_cost_usd = Decimal(site) if site else None
    caps.save()


def test_it_counts_the_runs_started_or_finished_today_for_the_user_and_the_site(
    caps: SpendCaps, alice: User, bob: User
) -> None:
    spent(alice, 0.5)
    spent(alice, 0.25, finished=None)  # still running
    spent(alice, 0.3, started=MIDNIGHT - timedelta(minutes=5))  # finished today
    spent(alice, 1.0, started=MIDNIGHT - timedelta(hours=2), finished=MIDNIGHT - timedelta(hours=1))
    spent(bob, 2.0)

    assert user_spend_today(alice, now=NOW) == pytest.approx(1.05)
    assert user_spend_today(bob, now=NOW) == pytest.approx(2.0)
    assert site_spend_today(now=NOW) == pytest.approx(3.05)


def test_with_no_caps_the_operators_per_run_cap_stays(caps: SpendCaps, alice: User) -> None:
    spent(alice, 50.0)

    assert run_cost_limits(PER_RUN, run=queued_run(alice), now=NOW) == PER_RUN


def test_what_is_left_of_the_users_cap_becomes_the_runs_cost_cap(
    caps: SpendCaps, alice: User
) -> None:
    set_caps(caps, user="2.00")
    spent(alice, 1.25)

    limits = run_cost_limits(PER_RUN, run=queued_run(alice), now=NOW)

    assert limits.max_cost_usd == pytest.approx(0.75)
    assert limits.cost_cap_name == ACCOUNT_CAP
    assert limits.cost_cap_note == "it resets at 00:00 UTC"


def test_other_users_spend_counts_for_the_site_cap_only(
    caps: SpendCaps, alice: User, bob: User
) -> None:
    set_caps(caps, user="2.00", site="5.00")
    spent(bob, 4.5)
    spent(alice, 0.25)

    alices = run_cost_limits(PER_RUN, run=queued_run(alice), now=NOW)
    set_caps(caps, user="2.00")
    without_site_cap = run_cost_limits(PER_RUN, run=queued_run(alice), now=NOW)

    assert (alices.max_cost_usd, alices.cost_cap_name) == (pytest.approx(0.25), SITE_CAP)
    assert without_site_cap.max_cost_usd == pytest.approx(1.75)  # bob's $4.50 is not hers
    assert without_site_cap.cost_cap_name == ACCOUNT_CAP


def test_yesterdays_spend_does_not_count(caps: SpendCaps, alice: User) -> None:
    set_caps(caps, user="2.00")
    spent(alice, 5.0, started=NOW - timedelta(days=1), finished=NOW - timedelta(days=1))

    assert run_cost_limits(PER_RUN, run=queued_run(alice), now=NOW).max_cost_usd == 2.0


def test_a_used_up_cap_leaves_nothing(caps: SpendCaps, alice: User) -> None:
    set_caps(caps, user="2.00", site="5.00")
    spent(alice, 2.5)

    limits = run_cost_limits(PER_RUN, run=queued_run(alice), now=NOW)

    assert (limits.max_cost_usd, limits.cost_cap_name) == (0.0, ACCOUNT_CAP)


def test_the_per_run_cap_stays_when_it_is_the_smallest(caps: SpendCaps, alice: User) -> None:
    set_caps(caps, user="2.00")

    limits = run_cost_limits(OperatorLimits(max_cost_usd=0.5), run=queued_run(alice), now=NOW)

    assert (limits.max_cost_usd, limits.cost_cap_name) == (0.5, "")


def test_the_environment_sets_the_caps_and_the_staffs_values_override_it(
    caps: SpendCaps, alice: User, settings: object
) -> None:
    settings.ORACLE_USER_DAILY_COST_USD = 3.0  # type: ignore[attr-defined]
    settings.ORACLE_SITE_DAILY_COST_USD = 4.0  # type: ignore[attr-defined]
    from_env = run_cost_limits(PER_RUN, run=queued_run(alice), now=NOW)
    set_caps(caps, site="2.50")
    overridden = run_cost_limits(PER_RUN, run=queued_run(alice), now=NOW)

    assert (from_env.max_cost_usd, from_env.cost_cap_name) == (
        3.0,
        "the daily spending cap for your account ($3.00)",
    )
    assert (overridden.max_cost_usd, overridden.cost_cap_name) == (
        2.5,
        "the site's daily spending cap ($2.50)",
    )


def test_a_resumed_or_approved_run_is_not_counted_twice_and_a_continued_one_counts_its_rounds(
    caps: SpendCaps, alice: User
) -> None:
    set_caps(caps, user="2.00")
    spent(alice, 1.0)
    run = spent(alice, 0.4, finished=None)
    state = AgentState(run_id=str(run.pk))
    state.round.cost_usd = state.total.cost_usd = 0.3  # its round so far; 0.1 before it
    run.state = json.loads(state.to_json())

    resumed = run_cost_limits(PER_RUN, run=run, state=state, action="resume", now=NOW)
    approved = run_cost_limits(PER_RUN, run=run, state=state, action="approve", now=NOW)
    continued = run_cost_limits(PER_RUN, run=run, state=state, action="continue", now=NOW)

    # Resumed, or going on after an approval, the round goes on counting from its $0.30:
    # it may reach $0.90 (a total of $1.00 for the run). Continued, a new round starts
    # from 0 after the run's $0.40.
    assert resumed.max_cost_usd == pytest.approx(0.9)
    assert approved.max_cost_usd == pytest.approx(0.9)
    assert continued.max_cost_usd == pytest.approx(0.6)


def test_the_claim_gives_the_run_what_is_left(caps: SpendCaps, alice: User) -> None:
    set_caps(caps, user="2.00")
    spent(alice, 1.5, started=datetime.now(UTC), finished=datetime.now(UTC))
    run = queued_run(alice)

    job = claim(str(run.pk))

    assert job is not None
    assert job.operator.max_cost_usd == pytest.approx(0.5)
    assert job.operator.cost_cap_name == ACCOUNT_CAP


def test_staff_edit_the_caps_in_the_admin(caps: SpendCaps, admin_client: Client) -> None:
    listing = admin_client.get("/admin/ops/spendcaps/")
    assert listing.status_code == 302
    form = admin_client.get(listing["Location"])
    assert form.status_code == 200

    saved = admin_client.post(
        listing["Location"], {"user_daily_cost_usd": "2.00", "site_daily_cost_usd": ""}
    )
    refused = admin_client.post(
        listing["Location"], {"user_daily_cost_usd": "-1", "site_daily_cost_usd": ""}
    )

    assert saved.status_code == 302
    assert refused.status_code == 200  # the form again, with the error
    caps = SpendCaps.load()
    assert (caps.user_daily_cost_usd, caps.site_daily_cost_usd) == (Decimal("2.00"), None)


def test_the_page_offers_no_continue_while_the_cap_is_used_up(
    caps: SpendCaps, alice: User, client: Client
) -> None:
    set_caps(caps, user="2.00")
    spent(alice, 2.5, started=datetime.now(UTC), finished=datetime.now(UTC))
    run = queued_run(alice)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.FINISHED, reason="cost_budget")
    Message.objects.create(
        conversation=run.conversation, run=run, seq=2, role=Role.SYSTEM,
        content="The daily spending cap for your account ($2.00) is used up; it resets at "
        "00:00 UTC.",
        metadata={"severity": "warning", "metric": "cost", "reason": "cost_budget",
                  "problem": "spending_cap"},
    )  # fmt: skip
    client.force_login(alice)
    page = f"/c/{run.conversation.pk}/"
    continue_url = f"/api/runs/{run.pk}/continue/"

    used_up = client.get(page).content.decode()
    refused = client.post(continue_url)
    set_caps(caps, user="5.00")  # staff raise the cap: another round can run
    renewed = client.get(page).content.decode()

    assert "is used up; it resets at 00:00 UTC." in used_up
    assert continue_url not in used_up
    assert refused.status_code == 409
    assert continue_url in renewed


# --- on the real stack -----------------------------------------------------------------

SEED = """
from datetime import UTC, datetime
from decimal import Decimal
from django.contrib.auth.models import User
from chat.models import Conversation, Run
from ops.models import SpendCaps
now = datetime.now(UTC)
for name, cost in {spend!r}.items():
    conversation = Conversation.objects.create(owner=User.objects.get(username=name))
    Run.objects.create(conversation=conversation, status="finished", cost_usd=cost,
                       started_at=now, finished_at=now)
caps = SpendCaps.load()
caps.user_daily_cost_usd = {user}
caps.site_daily_cost_usd = {site}
caps.save()
"""


def seed(stack: OracleStack, *, spend: dict[str, float], user: str, site: str) -> None:
    from tests import processes

    code = SEED.format(spend=spend, user=user, site=site)
    done = processes.shell(code, env=stack.env)
    assert done.returncode == 0, done.stderr


def test_used_up_daily_caps_stop_runs_at_once_on_the_real_stack(
    stack: OracleStack, fake_provider: FakeServer
) -> None:
    fake_provider.set_script([{"text": ["Four."]}], repeat_last=True)
    ivy, jack, kate = (
        stack.client(stack.create_user(name)) for name in ("caps-ivy", "caps-jack", "caps-kate")
    )
    # ivy has spent more than her own $2.00 today; the site's $5.00 is not used up yet.
    seed(stack, spend={"caps-ivy": 2.5}, user="Decimal('2.00')", site="Decimal('5.00')")
    try:
        ivys_conversation, ivys_run = start_conversation(ivy, "What is 2+2?")
        _, jacks_run = start_conversation(jack, "What is 2+2?")
        ivys, jacks = wait_until_finished(ivy, ivys_run), wait_until_finished(jack, jacks_run)
        # Then the site has spent $5.50 of its $5.00: everyone's runs stop.
        seed(stack, spend={"caps-jack": 3.0}, user="Decimal('2.00')", site="Decimal('5.00')")
        kates_conversation, kates_run = start_conversation(kate, "What is 2+2?")
        kates = wait_until_finished(kate, kates_run)
        # Another round would stop at once: Continue is refused, saying why.
        refused = ivy.post(f"/api/runs/{ivys_run}/continue/")
    finally:
        seed(stack, spend={}, user="None", site="None")

    assert refused.status_code == 409
    assert refused.json()["error"] == (  # both are used up: hers is named
        "The daily spending cap for your account ($2.00) is used up; it resets at 00:00 UTC."
    )
    assert ivy.get(f"/api/runs/{ivys_run}/").json()["status"] == "finished"  # unchanged

    assert (ivys["reason"], ivys["iterations"]) == ("cost_budget", 0)
    assert system_message(ivy, ivys_conversation) == (
        "The daily spending cap for your account ($2.00) is used up; it resets at 00:00 UTC."
    )
    assert jacks["reason"] == "completed"  # ivy's spend is hers alone
    assert (kates["reason"], kates["iterations"]) == ("cost_budget", 0)
    assert system_message(kate, kates_conversation) == (
        "The site's daily spending cap ($5.00) is used up; it resets at 00:00 UTC."
    )


def system_message(client: httpx.Client, conversation: str) -> str:
    """The System message of a conversation's only run."""
    messages = client.get(f"/api/conversations/{conversation}/").json()["messages"]
    (notice,) = [m["content"] for m in messages if m["role"] == "system"]
    return str(notice)
