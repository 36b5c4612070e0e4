"""Limit recommendations: the 95th percentile of completed runs' iterations and tokens,
within AgentConfig's bounds, beside the current defaults; Apply writes it (one POST)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from dashboard.aggregates import Distribution, percentile
from dashboard.periods import period_named
from dashboard.recommendations import MIN_RUNS, Limits, Recommendation, advise
from dashboard.selectors import dashboard_figures
from settings_ui.models import AgentTypeLimits, SiteDefaults
from settings_ui.services import agent_config_for
from tests.dashboard.conftest import Helper, make_run


def test_the_percentile_is_the_nearest_rank() -> None:
    assert percentile([]) is None
    assert percentile([7]) == 7
    assert percentile(list(range(1, 21))) == 19  # 95% of 20 is 19 runs
    assert percentile(list(range(1, 22))) == 20  # 19.95 rounds up to the 20th
    assert percentile(list(range(100, 0, -1))) == 95  # in any order
    assert percentile([1] * 95 + [50] * 5) == 1


def test_advice_lets_95_percent_of_completed_runs_finish() -> None:
    iterations = list(range(1, 41))  # 40 runs: the 38th needs 38 iterations
    tokens = [1_000 * n + 1 for n in range(1, 41)]
    assert advise(Distribution.of(iterations), Distribution.of(tokens)) == Limits(
        max_iterations=38, token_budget=39_000
    )


def test_advice_needs_enough_runs_and_stays_within_the_bounds() -> None:
    few = Distribution.of([3] * (MIN_RUNS - 1)), Distribution.of([900] * (MIN_RUNS - 1))
    assert advise(*few) is None
    many = Distribution.of([80] * MIN_RUNS), Distribution.of([250_000] * MIN_RUNS)
    assert advise(*many) == Limits(50, 200_000)
    little = Distribution.of([1] * MIN_RUNS), Distribution.of([10] * MIN_RUNS)
    assert advise(*little) == Limits(1, 1_000)


@pytest.mark.django_db
def test_it_recommends_per_agent_type_and_skill_from_the_periods_runs(
    alice: User,
) -> None:
    AgentTypeLimits.objects.filter(name="summarizer").update(max_iterations=5, token_budget=20_000)
    for n in range(1, 41):
        make_run(alice, iterations=n, tokens=1_000 * n)
    make_run(alice, reason="max_iterations", iterations=15, tokens=60_000)
    make_run(alice, reason="token_budget", iterations=9, tokens=50_000)
    for n in range(1, 25):
        make_run(alice, skill="deep_research", helpers=(Helper("summarizer", iterations=1 + n % 3,
                                                               tokens=2_000 + n),))  # fmt: skip

    advice = dashboard_figures(period=period_named("7d")).recommendations
    rows = {(r.agent_type, r.skill): r for r in advice}

    default = rows[("oracle", "default")]
    assert default.completed == 40
    assert (default.stopped_at_iterations, default.stopped_at_tokens) == (1, 1)
    assert default.current == Limits(15, 50_000)
    assert default.advised == Limits(38, 38_000)
    assert default.can_apply
    deep = rows[("oracle", "deep_research")]
    assert deep.current == Limits(30, 50_000)
    assert deep.completed == 24 and deep.advised is not None
    assert not deep.can_apply and "2 times the default iterations" in deep.note
    assert rows[("oracle", "quick_answer")].advised is None  # no runs: no advice
    summarizer = rows[("summarizer", "")]
    assert summarizer.current == Limits(5, 20_000)
    assert summarizer.advised == Limits(3, 3_000)
    assert summarizer.can_apply
    assert rows[("researcher", "")].advised is None


def test_a_recommendation_equal_to_the_current_limits_has_nothing_to_apply() -> None:
    row = Recommendation("oracle", "default", "Oracle · Default", 30, 0, 0,
                         Limits(15, 50_000), Limits(15, 50_000), "new users")  # fmt: skip
    assert not row.can_apply


@pytest.mark.django_db
def test_the_page_shows_advice_beside_the_defaults(staff_client: Client, alice: User) -> None:
    for n in range(1, 21):
        make_run(alice, iterations=n, tokens=1_000)
    page = staff_client.get("/dashboard/").content.decode()
    assert '15 → <strong class="changed">19</strong>' in page
    assert '50,000 → <strong class="changed">1,000</strong>' in page
    assert 'name="agent_type" value="oracle"' in page
    assert "Not enough runs (0 of 20)" in page


@pytest.mark.django_db
def test_apply_sets_a_subagent_types_limits_and_says_so(staff_client: Client) -> None:
    data = {"agent_type": "researcher", "max_iterations": "12", "token_budget": "41000",
            "period": "30d"}  # fmt: skip
    response = staff_client.post("/dashboard/recommendations/apply/", data, follow=True)

    assert response.redirect_chain[-1][0] == "/dashboard/?period=30d#recommendations"
    row = AgentTypeLimits.objects.get(name="researcher")
    assert (row.max_iterations, row.token_budget) == (12, 41_000)
    page = response.content.decode()
    assert (
        "The researcher helper now has 12 iterations (was 30) and a token budget of 41,000 "
        "(was 100,000)." in page
    )


@pytest.mark.django_db
def test_apply_to_the_oracle_sets_what_new_users_start_with(
    staff_client: Client, alice: User
) -> None:
    before = agent_config_for(user=alice)  # alice has settings already
    data = {"agent_type": "oracle", "max_iterations": "22", "token_budget": "64000"}
    response = staff_client.post("/dashboard/recommendations/apply/", data, follow=True)

    assert "New users now start with 22 iterations (was 15)" in response.content.decode()
    assert SiteDefaults.config().max_iterations == 22
    newcomer = User.objects.create_user("newcomer")
    config = agent_config_for(user=newcomer)
    assert (config.max_iterations, config.token_budget) == (22, 64_000)
    assert config.timeout_seconds == 120  # the other fields keep AgentConfig's defaults
    assert agent_config_for(user=alice) == before


@pytest.mark.django_db
@pytest.mark.parametrize(
    "data",
    [
        {"agent_type": "researcher", "max_iterations": "51", "token_budget": "5000"},
        {"agent_type": "researcher", "max_iterations": "5", "token_budget": "999"},
        {"agent_type": "researcher", "max_iterations": "five", "token_budget": "5000"},
        {"agent_type": "nobody", "max_iterations": "5", "token_budget": "5000"},
    ],
)
def test_apply_refuses_what_is_out_of_bounds_and_saves_nothing(
    staff_client: Client, data: dict[str, str]
) -> None:
    response = staff_client.post("/dashboard/recommendations/apply/", data)
    assert response.status_code == 400
    assert "Nothing was changed." in response.content.decode()
    row = AgentTypeLimits.objects.get(name="researcher")
    assert (row.max_iterations, row.token_budget) == (30, 100_000)
    assert not SiteDefaults.objects.exists()


@pytest.mark.django_db
def test_apply_needs_the_csrf_token(staff: User) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff)
    data = {"agent_type": "researcher", "max_iterations": "12", "token_budget": "41000"}
    assert client.post("/dashboard/recommendations/apply/", data).status_code == 403
    assert AgentTypeLimits.objects.get(name="researcher").max_iterations == 30
