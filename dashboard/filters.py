"""The run list's filters: the query string every figure of the dashboard links with,
read back by a form. One place knows their names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.urls import reverse
from django.utils import timezone

from agents.config import LimitAction
from agents.events import EventType
from agents.skills import skill_names
from agents.state import TerminationReason
from agents.subagents import MAIN_AGENT
from agents.wording import reason_label
from dashboard.periods import DEFAULT_PERIOD, PERIODS, Period, period_named

ANY_LIMIT = "limit"  # the reason filter for all of LIMIT_REASONS
EVENTS = {"paused": EventType.RUN_PAUSED, "extended": EventType.BUDGET_EXTENDED}
# The context window's events: a run list of the runs that had one (by their start).
CONTEXT_EVENTS = {"compacted": EventType.CONTEXT_COMPACTED, "refused": EventType.CONTEXT_REFUSED}
EVENT_LABELS = {
    "paused": "Paused at a limit",
    "extended": "Extended at a limit",
    "compacted": "A request shortened to fit the context window",
    "refused": "A request refused as too long",
}
_HOUR = re.compile(r"\d{4}-\d\d-\d\d \d\d")


def run_list_url(period: Period, **filters: Any) -> str:
    """The run list behind a figure: the period's runs that pass `filters`."""
    query = {"period": period.key, **{k: v for k, v in filters.items() if v not in ("", None)}}
    return f"{reverse('dashboard-runs')}?{urlencode(query)}"


def hour_start(hour: str) -> datetime:
    """The start of a UTC hour given as "2026-11-20 13" (ValueError if it is not one)."""
    if not _HOUR.fullmatch(hour):
        raise ValueError(f"not an hour: {hour!r}")
    year, month, day, time = int(hour[:4]), int(hour[5:7]), int(hour[8:10]), int(hour[11:])
    return datetime(year, month, day, time, tzinfo=UTC)


def day_span(day: date) -> tuple[datetime, datetime]:
    """The start and end of a day in the site's time zone."""
    zone = timezone.get_current_timezone()
    start = datetime.combine(day, datetime.min.time(), tzinfo=zone)
    return start, datetime.combine(day + timedelta(days=1), datetime.min.time(), tzinfo=zone)


def _choices(values: list[str], labels: dict[str, str] | None = None) -> list[tuple[str, str]]:
    return [("", "Any"), *((value, (labels or {}).get(value, value)) for value in values)]


class RunFilterForm(forms.Form):
    """The run list's query string. Anything it does not know is an error (400)."""

    period = forms.ChoiceField(
        choices=[(p.key, p.label) for p in PERIODS], required=False, initial=DEFAULT_PERIOD.key
    )
    agent = forms.SlugField(required=False, max_length=40)
    skill = forms.ChoiceField(choices=_choices(skill_names()), required=False)
    reason = forms.ChoiceField(
        choices=[
            ("", "Any"),
            (ANY_LIMIT, "Any limit"),
            *((r.value, reason_label(r.value, staff=True)) for r in TerminationReason),
        ],
        required=False,
    )
    action = forms.ChoiceField(choices=_choices([a.value for a in LimitAction]), required=False)
    event = forms.ChoiceField(choices=_choices([*EVENTS, *CONTEXT_EVENTS]), required=False)
    model = forms.CharField(required=False, max_length=200)
    user = forms.IntegerField(required=False, min_value=1)
    hour = forms.RegexField(regex=_HOUR, required=False, max_length=13)
    day = forms.DateField(required=False, input_formats=["%Y-%m-%d"])
    pattern = forms.CharField(required=False, max_length=300, strip=False)
    page = forms.IntegerField(required=False, min_value=1)

    def clean_hour(self) -> str:
        hour: str = self.cleaned_data["hour"]
        if hour:
            try:
                hour_start(hour)
            except ValueError:
                raise forms.ValidationError("Not an hour: use YYYY-MM-DD HH.") from None
        return hour

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("agent") not in ("", None, MAIN_AGENT) and (
            data.get("event") or data.get("action") or data.get("pattern") or data.get("model")
        ):
            raise forms.ValidationError(
                "Helpers have no limit action, pauses, patterns or model of their own."
            )
        return data


@dataclass(frozen=True)
class RunFilters:
    """The run list's filters, checked."""

    period: Period
    agent: str = MAIN_AGENT
    skill: str = ""
    reason: str = ""
    action: str = ""
    event: str = ""
    user: int | None = None
    hour: str = ""
    day: date | None = None
    pattern: str = ""
    model: str = ""
    page: int = 1

    @classmethod
    def from_form(cls, data: dict[str, Any]) -> RunFilters:
        return cls(
            period=period_named(data.get("period")),
            agent=data.get("agent") or MAIN_AGENT,
            skill=data.get("skill") or "",
            reason=data.get("reason") or "",
            action=data.get("action") or "",
            event=data.get("event") or "",
            user=data.get("user"),
            hour=data.get("hour") or "",
            day=data.get("day"),
            pattern=data.get("pattern") or "",
            model=data.get("model") or "",
            page=data.get("page") or 1,
        )

    @property
    def event_label(self) -> str:
        return EVENT_LABELS.get(self.event, "")

    def url(self, **changes: Any) -> str:
        """This list's address, with `changes` (another page, say)."""
        values = {
            "agent": "" if self.agent == MAIN_AGENT else self.agent,
            "skill": self.skill,
            "reason": self.reason,
            "action": self.action,
            "event": self.event,
            "user": self.user,
            "hour": self.hour,
            "day": self.day.isoformat() if self.day else "",
            "pattern": self.pattern,
            "model": self.model,
            **changes,
        }
        return run_list_url(self.period, **values)
