"""The staff dashboard: limit statistics, the runs behind them, limit recommendations.

Staff only: anyone else, logged in or not, gets a 404, as for a page that is not there.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from accounts.http import AuthenticatedHttpRequest
from agents.config import ConfigError
from agents.subagents import MAIN_AGENT
from dashboard import selectors
from dashboard.charts import chart_data
from dashboard.filters import RunFilterForm, RunFilters
from dashboard.hits import limit_hits_by_hour
from dashboard.periods import DEFAULT_PERIOD, PERIODS, UnknownPeriod, period_named
from dashboard.recommendations import MIN_RUNS, Limits
from dashboard.run_list import run_list as runs_behind
from dashboard.services import UnknownAgentType, alert_acknowledge, recommendation_apply

View = TypeVar("View", bound=Callable[..., HttpResponse])


def staff_only(view: View) -> View:
    """Let staff in; answer 404 to everyone else (never a redirect to the login page)."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        user = request.user
        if not (user.is_authenticated and user.is_active and user.is_staff):
            raise Http404("No such page.")
        return view(request, *args, **kwargs)

    return login_not_required(wrapped)  # type: ignore[return-value]


def _dashboard_url(period_key: str, anchor: str = "") -> str:
    query = "" if period_key == DEFAULT_PERIOD.key else f"?{urlencode({'period': period_key})}"
    return f"{reverse('dashboard')}{query}{anchor}"


@staff_only
@require_GET
def dashboard(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The figures of one period (`?period=24h|7d|30d`; 7 days by default)."""
    try:
        period = period_named(request.GET.get("period"))
    except UnknownPeriod as error:
        refusal = {"error": str(error), "periods": PERIODS, "period": None}
        return render(request, "dashboard/dashboard.html", refusal, status=400)
    began = time.perf_counter()
    figures = selectors.dashboard_figures(period=period)
    context: dict[str, Any] = {
        "figures": figures,
        "charts": chart_data(figures),
        "periods": PERIODS,
        "period": period,
        "alerts": selectors.open_alerts(),
        "query_ms": round((time.perf_counter() - began) * 1000),
        "min_runs": MIN_RUNS,
    }
    return render(request, "dashboard/dashboard.html", context)


@staff_only
@require_GET
def run_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The runs behind a figure: their counters, reasons and stuck patterns."""
    form = RunFilterForm(request.GET)
    unknown = sorted(set(request.GET) - set(form.fields))
    if not form.is_valid() or unknown:
        errors = _messages(form)
        errors += [f"Unknown filter {name!r}." for name in unknown]
        context: dict[str, Any] = {"errors": errors, "periods": PERIODS}
        return render(request, "dashboard/runs.html", context, status=400)
    filters = RunFilters.from_form(form.cleaned_data)
    page, rows = runs_behind(filters)
    context = {
        "filters": filters,
        "form": form,
        "page": page,
        "rows": rows,
        "periods": PERIODS,
        "is_helper": filters.agent != MAIN_AGENT,
        "previous_url": filters.url(page=page.previous_page_number())
        if page.has_previous()
        else "",
        "next_url": filters.url(page=page.next_page_number()) if page.has_next() else "",
        "dashboard_url": _dashboard_url(filters.period.key),
    }
    return render(request, "dashboard/runs.html", context)


@staff_only
@require_GET
def hour_table(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The hours with limit hits as a table: the part of the dashboard it opens (htmx),
    or a page of its own."""
    try:
        period = period_named(request.GET.get("period"))
    except UnknownPeriod as error:
        context: dict[str, Any] = {"errors": [str(error)], "periods": PERIODS}
        return render(request, "dashboard/runs.html", context, status=400)
    context = {
        "hours": limit_hits_by_hour(period=period),
        "period": period,
        "periods": PERIODS,
        "dashboard_url": _dashboard_url(period.key, "#limit-hits"),
    }
    template = "dashboard/_hours_table.html" if request.htmx else "dashboard/hours.html"
    return render(request, template, context)


class ApplyForm(forms.Form):
    agent_type = forms.SlugField(max_length=40)
    max_iterations = forms.IntegerField()
    token_budget = forms.IntegerField()
    period = forms.ChoiceField(choices=[(p.key, p.label) for p in PERIODS], required=False)


@staff_only
@require_POST
def recommendation_apply_view(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Apply one recommendation (the values shown) and say what changed."""
    form = ApplyForm(request.POST)
    if not form.is_valid():
        return _refused(request, _messages(form))
    data = form.cleaned_data
    limits = Limits(data["max_iterations"], data["token_budget"])
    try:
        before, after = recommendation_apply(agent_type=data["agent_type"], limits=limits)
    except ConfigError as error:
        return _refused(request, [f"{n}: {' '.join(e)}" for n, e in error.errors.items()])
    except UnknownAgentType as error:
        return _refused(request, [str(error)])
    who = (
        "New users now start with"
        if data["agent_type"] == MAIN_AGENT
        else f"The {data['agent_type']} helper now has"
    )
    messages.success(
        request,
        f"{who} {after.max_iterations} iterations (was {before.max_iterations}) and a "
        f"token budget of {after.token_budget:,} (was {before.token_budget:,}).",
    )
    return redirect(_dashboard_url(data.get("period") or DEFAULT_PERIOD.key, "#recommendations"))


def _messages(form: forms.Form) -> list[str]:
    return [f"{name}: {' '.join(map(str, errors))}" for name, errors in form.errors.items()]


def _refused(request: HttpRequest, errors: list[str]) -> HttpResponse:
    context = {"errors": ["Nothing was changed.", *errors], "periods": PERIODS}
    return render(request, "dashboard/runs.html", context, status=400)


@staff_only
@require_POST
def alert_acknowledge_view(request: AuthenticatedHttpRequest, alert_id: int) -> HttpResponse:
    if not alert_acknowledge(alert_id=alert_id, user=request.user):
        raise Http404("No such alert.")
    messages.success(request, "Alert acknowledged.")
    return redirect(_dashboard_url(request.POST.get("period") or DEFAULT_PERIOD.key))
