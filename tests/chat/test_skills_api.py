"""Skills in the API and on the pages: listed, chosen when a conversation starts, shown."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from accounts.services import api_token_create
from agents.tree import DefaultDecisionTree, decision_tree
from chat.models import Conversation, Message, Run
from chat.services import conversation_create

pytestmark = pytest.mark.django_db

SKILLS = [
    {
        "name": "default",
        "title": "Default",
        "description": "Works with its tools within your own limits.",
    },
    {
        "name": "deep_research",
        "title": "Deep research",
        "description": "Plans first, then searches with twice the iterations; may delegate; "
        "stops when searching finds nothing new.",
    },
    {
        "name": "quick_answer",
        "title": "Quick answer",
        "description": "A short, direct answer: at most 3 iterations and 5 tool calls, "
        "no delegation.",
    },
]
CHOICES = "Unknown skill. Choose one of: default, deep_research, quick_answer."


@decision_tree("chat_test_only_a_tree")
class OnlyATree(DefaultDecisionTree):
    """A decision tree that no skill offers."""


def bearer(user: User) -> dict[str, str]:
    _, raw = api_token_create(user=user, name="test")
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


def create(client: Client, data: object, **headers: str) -> object:
    return client.post(
        "/api/conversations/", json.dumps(data), content_type="application/json", **headers
    )


# --- the API ------------------------------------------------------------------------


def test_it_lists_the_skills_with_a_bearer_token(client: Client, alice: User) -> None:
    response = client.get("/api/skills/", **bearer(alice))

    assert response.status_code == 200
    assert response.json() == {"skills": SKILLS}


def test_it_lists_the_skills_for_a_session(client: Client, alice: User) -> None:
    client.force_login(alice)

    assert client.get("/api/skills/").json() == {"skills": SKILLS}


def test_the_skills_need_a_login_and_are_read_only(client: Client, alice: User) -> None:
    assert client.get("/api/skills/").status_code == 401
    response = client.post("/api/skills/", **bearer(alice))
    assert response.status_code == 405
    assert response["Allow"] == "GET"


@pytest.mark.parametrize("skill", ["default", "deep_research", "quick_answer"])
def test_it_creates_a_conversation_with_each_skill(client: Client, alice: User, skill: str) -> None:
    response = create(client, {"skill": skill}, **bearer(alice))

    assert response.status_code == 201
    assert response.json()["skill"] == skill
    conversation = Conversation.objects.get(id=response.json()["id"])
    assert conversation.skill == skill
    shown = client.get(f"/api/conversations/{conversation.id}/", **bearer(alice)).json()
    assert shown["skill"] == skill


@pytest.mark.parametrize(
    "skill", ["chat_test_only_a_tree", "Deep research", "", None, 3, ["quick_answer"]]
)
def test_anything_but_a_skill_is_a_400_naming_the_choices_and_creates_nothing(
    client: Client, alice: User, skill: object
) -> None:
    response = create(client, {"skill": skill, "title": "Owls"}, **bearer(alice))

    assert response.status_code == 400
    assert response.json() == {"errors": {"skill": [CHOICES]}}
    assert not Conversation.objects.exists()


def test_without_a_skill_a_conversation_uses_the_default(client: Client, alice: User) -> None:
    response = create(client, {"title": "Owls"}, **bearer(alice))

    assert response.json()["skill"] == "default"


# --- the pages ----------------------------------------------------------------------


def test_the_first_page_offers_the_skills_with_default_chosen(client: Client, alice: User) -> None:
    client.force_login(alice)

    page = client.get("/").content.decode()

    assert page.count('name="skill"') == 3
    assert '<input type="radio" name="skill" value="default" id="skill-default" checked' in page
    assert 'value="deep_research" id="skill-deep_research"' in page
    assert 'value="quick_answer" id="skill-quick_answer"' in page
    for skill in SKILLS:
        assert skill["title"] in page
        assert skill["description"] in page
    assert "<legend>Skill</legend>" in page
    assert "{#" not in page and "{% comment" not in page  # no template comment shows


def test_the_first_message_starts_a_conversation_with_the_chosen_skill(
    client: Client, alice: User
) -> None:
    client.force_login(alice)

    response = client.post("/c/new/", {"content": "What do owls eat?", "skill": "quick_answer"})

    conversation = Conversation.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/c/{conversation.id}/"
    assert conversation.skill == "quick_answer"
    assert Run.objects.filter(conversation=conversation).count() == 1


def test_without_a_choice_the_first_message_uses_the_default(client: Client, alice: User) -> None:
    client.force_login(alice)

    client.post("/c/new/", {"content": "What do owls eat?"})

    assert Conversation.objects.get().skill == "default"


def test_a_bad_skill_on_the_first_page_is_a_clear_error_and_saves_nothing(
    client: Client, alice: User
) -> None:
    client.force_login(alice)

    response = client.post(
        "/c/new/", {"content": "What do owls eat?", "skill": "astrology"}, follow=True
    )

    assert CHOICES in response.content.decode()
    assert not Conversation.objects.exists()
    assert not Message.objects.exists()
    assert not Run.objects.exists()


@pytest.mark.parametrize(
    ("skill", "badge"), [("deep_research", "Deep research"), ("quick_answer", "Quick answer")]
)
def test_the_conversation_shows_its_skill(
    client: Client, alice: User, skill: str, badge: str
) -> None:
    conversation = conversation_create(owner=alice, title="Owls", skill=skill)
    client.force_login(alice)

    page = client.get(f"/c/{conversation.id}/").content.decode()

    assert 'class="skill-badge"' in page
    assert f"Skill: </span>{badge}</span>" in page


def test_the_default_skill_shows_no_badge(client: Client, alice: User) -> None:
    conversation = conversation_create(owner=alice, title="Owls")
    client.force_login(alice)

    page = client.get(f"/c/{conversation.id}/").content.decode()

    assert "skill-badge" not in page
