"""A database of made-up finished runs for measuring the dashboard (`manage.py seed_runs N`).

The runs look like the engine's own: each has its user message, its final answer and,
when it did not complete, the System notice and `run.finished` event `agents.endings`
writes; a `run.started` event with the model and config it ran under; pauses and
extensions for users whose limit action pauses or extends; `delegate` steps with their
subagents' events; requests shortened to fit the model's context window or refused as
too long (`dashboard.seeding_context`). They are spread over users (a few heavy ones),
skills, models, reasons, limit actions and the days of the period, with more runs by day
than by night. No real text.

A run is made in `dashboard.seeding_runs` (its helpers in `seeding_delegation`), and its
rows written in batches by `dashboard.seeding_rows`.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from agents.config import LimitAction
from dashboard.seeding_context import MODEL_WEIGHTS, MODELS
from dashboard.seeding_rows import BATCH, Seeded, Tables
from dashboard.seeding_runs import Profile, add_run

USERNAME_PREFIX = "seed-user-"
SKILL_WEIGHTS = {"default": 60, "deep_research": 25, "quick_answer": 15}
ACTION_WEIGHTS = {LimitAction.STOP: 70, LimitAction.PAUSE: 10, LimitAction.EXTEND: 10,
                  LimitAction.WARN: 10}  # fmt: skip
PRICES = (0.15e-6, 0.6e-6, 2.5e-6, 10e-6)  # dollars per token of the users' models
PRICE_WEIGHTS = (30, 40, 25, 5)


def seed_runs(count: int, *, days: int = 30, seed: int = 1, now: datetime | None = None) -> Seeded:
    """Add `count` finished runs spread over the last `days` days (users made as needed)."""
    rng = random.Random(seed)
    now = now or timezone.now()
    users = _users(max(10, count // 400))
    seeded = Seeded(users=len(users))
    profiles = [
        Profile(
            rng.choices(list(ACTION_WEIGHTS), list(ACTION_WEIGHTS.values()))[0],
            rng.choices(PRICES, PRICE_WEIGHTS)[0],
            rng.choices(MODELS, MODEL_WEIGHTS)[0],
        )
        for _ in users
    ]
    # A few users run most of the runs.
    cumulative = list(_accumulate([rng.paretovariate(1.3) for _ in users]))
    tables = Tables()
    made = 0
    with transaction.atomic():
        while made < count:
            index = rng.choices(range(len(users)), cum_weights=cumulative)[0]
            size = min(count - made, rng.choice((1, 1, 1, 2, 2, 3, 4, 6, 9)))
            start = _when(rng, now, days)
            _conversation(rng, tables, users[index].pk, profiles[index], size, start, now, seeded)
            made += size
            if len(tables.events.rows) >= BATCH * 4:
                tables.flush(seeded)
        tables.flush(seeded)
    return seeded


def _accumulate(values: Sequence[float]) -> list[float]:
    total, out = 0.0, []
    for value in values:
        total += value
        out.append(total)
    return out


def _users(wanted: int) -> list[User]:
    names = [f"{USERNAME_PREFIX}{number:04d}" for number in range(1, wanted + 1)]
    existing = set(User.objects.filter(username__in=names).values_list("username", flat=True))
    User.objects.bulk_create(
        User(username=name, password="!seeded")  # an unusable password: nobody logs in
        for name in names
        if name not in existing
    )
    return list(User.objects.filter(username__in=names).order_by("username"))


def _when(rng: random.Random, now: datetime, days: int) -> datetime:
    """A moment in the last `days` days, three times likelier by day than by night. Its
    tries draw from a generator of their own (seeded by one draw of `rng`), so how many
    it takes, which hangs on the time of day now, changes nothing else that is seeded."""
    own = random.Random(rng.random())
    while True:
        moment = now - timedelta(seconds=own.uniform(0, days * 86_400))
        if 8 <= moment.hour < 20 or own.random() < 1 / 3:
            return moment


def _conversation(
    rng: random.Random,
    tables: Tables,
    owner_id: int,
    profile: Profile,
    runs: int,
    start: datetime,
    now: datetime,
    seeded: Seeded,
) -> None:
    skill = rng.choices(list(SKILL_WEIGHTS), list(SKILL_WEIGHTS.values()))[0]
    conversation_id = uuid.uuid4()
    moment, seq = start, 0
    for _ in range(runs):
        moment = min(moment + timedelta(seconds=rng.uniform(20, 900)), now)
        seq = add_run(rng, tables, conversation_id, skill, profile, moment, seq, seeded)
    tables.conversations.add(
        conversation_id, owner_id, "Seeded conversation", skill, "", seq, start, moment, []
    )
    seeded.conversations += 1
