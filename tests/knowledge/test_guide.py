"""The built-in user guide: indexed at migration, again only when it changed, back when
missing, and true to the settings page's own words."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from agents.config import FIELDS
from agents.skills import SKILLS
from knowledge import services
from knowledge.models import Document, Passage
from knowledge.selectors import documents_for, search_passages
from tests.knowledge.conftest import indexed_passage_ids

pytestmark = pytest.mark.django_db
GUIDE = services.GUIDE_PATH.read_text()


def test_migrating_indexed_the_guide() -> None:
    guide = Document.objects.get(owner__isnull=True)

    assert guide.title == "Oracle user guide"
    assert guide.builtin
    assert guide.passage_count == Passage.objects.filter(document=guide).count() > 20
    assert guide.text == GUIDE.rstrip()


def test_indexing_it_again_unchanged_does_nothing() -> None:
    before = list(Passage.objects.filter(document__owner__isnull=True).values_list("id", flat=True))

    services.ensure_guide()

    after = list(Passage.objects.filter(document__owner__isnull=True).values_list("id", flat=True))
    assert after == before


def test_a_changed_guide_is_indexed_again_under_the_same_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = Document.objects.get(owner__isnull=True)
    changed = tmp_path / "guide.md"
    changed.write_text("# Oracle user guide\n\n## Quaggas\n\nA new section about quaggas.\n")
    monkeypatch.setattr(services, "GUIDE_PATH", changed)

    services.ensure_guide()

    new = Document.objects.get(owner__isnull=True)
    assert new.pk == old.pk
    assert new.content_hash != old.content_hash
    assert [p.location for p in new.passages.all()] == ["Quaggas"]
    assert indexed_passage_ids("quagga") and not indexed_passage_ids("iteration")


def test_listing_and_searching_write_nothing_and_migrate_brings_a_missing_guide_back(
    alice: User, django_assert_num_queries: Any
) -> None:
    Document.objects.filter(owner__isnull=True).delete()
    with django_assert_num_queries(1):  # one read, nothing written
        assert list(documents_for(alice)) == []

    call_command("migrate", verbosity=0)  # as `make run` does at every start

    assert [d.title for d in documents_for(alice)] == ["Oracle user guide"]
    assert search_passages(user=alice, query="iteration limit")


def test_the_guide_is_between_1500_and_3000_words() -> None:
    assert 1500 <= len(GUIDE.split()) <= 3000


@pytest.mark.parametrize("spec", FIELDS, ids=lambda spec: spec.name)
def test_the_guide_names_every_setting_as_the_settings_page_does(spec: object) -> None:
    assert f"**{spec.label}**" in GUIDE  # type: ignore[attr-defined]


@pytest.mark.parametrize("skill", SKILLS, ids=lambda skill: skill.name)
def test_the_guide_describes_every_skill(skill: object) -> None:
    assert f"**{skill.title}**" in GUIDE  # type: ignore[attr-defined]


def test_the_guide_tells_the_default_of_every_limit() -> None:
    for spec in FIELDS:
        if spec.kind in ("int", "float"):
            default = f"{spec.default:,.2f}" if spec.kind == "float" else f"{spec.default:,}"
            assert re.search(rf"\*\*{re.escape(spec.label)}\*\*[^.]*default {default}", GUIDE), (
                spec.name
            )
