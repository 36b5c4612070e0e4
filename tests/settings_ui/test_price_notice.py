"""The page says when the cost limit cannot apply because the model has no price."""

from __future__ import annotations

import sys
import types

from django.test import Client


def notice(html: str) -> str:
    start = html.index('id="price-notice"')
    return html[start : html.index("</p>", start)]


def test_the_offline_model_has_no_price(alice_client: Client, settings):
    settings.ORACLE_MODEL = ""
    settings.ORACLE_MODELS = []

    html = alice_client.get("/settings/").content.decode()

    assert "Offline model (built in)" in html
    assert "cost limit cannot apply" in notice(html)


def test_a_priced_model_has_no_notice_and_an_unpriced_one_has(
    alice_client: Client, two_models: list[str]
):
    html = alice_client.get("/settings/").content.decode()
    assert "Server default (openai/gpt-4o-mini)" in html
    assert "hidden" in notice(html)

    response = alice_client.post("/settings/fields/model/", {"model": "ollama/llama3"})
    fragment = response.content.decode()
    assert 'hx-swap-oob="true"' in fragment  # the page updates the notice in place
    assert "ollama/llama3 has no price in LiteLLM" in notice(fragment)
    assert "cost limit cannot apply" in notice(alice_client.get("/settings/").content.decode())

    response = alice_client.post("/settings/fields/model/", {"model": "openai/gpt-4o-mini"})
    assert "hidden" in notice(response.content.decode())


def test_a_page_drawn_before_the_price_list_is_loaded_fetches_its_notice_after(
    alice_client: Client, two_models: list[str], monkeypatch
):
    """The first Settings page after a start does not wait the seconds LiteLLM takes to
    load: the notice comes in after, from its own address."""
    alice_client.post("/settings/fields/model/", {"model": "ollama/llama3"})
    monkeypatch.delitem(sys.modules, "agents.litellm_model")  # as in a process just started

    html = alice_client.get("/settings/").content.decode()

    assert "agents.litellm_model" not in sys.modules  # the page did not load it
    assert 'hx-get="/settings/price-notice/"' in notice(html) and "hidden" in notice(html)
    later = alice_client.get("/settings/price-notice/").content.decode()
    assert "ollama/llama3 has no price in LiteLLM" in notice(later)
    assert "hx-get" not in later and "hidden" not in notice(later)


def test_a_page_drawn_while_another_request_loads_the_price_list_does_not_wait_for_it(
    alice_client: Client, two_models: list[str], monkeypatch
):
    """A module is in sys.modules from the start of its import: while the notice's own
    request is still loading LiteLLM, the page is drawn without the notice rather than
    waiting (behind the import's lock) for the load to finish."""
    alice_client.post("/settings/fields/model/", {"model": "ollama/llama3"})
    loading = types.ModuleType("agents.litellm_model")  # its body not run yet
    monkeypatch.setitem(sys.modules, "agents.litellm_model", loading)

    response = alice_client.get("/settings/")

    assert response.status_code == 200
    html = response.content.decode()
    assert 'hx-get="/settings/price-notice/"' in notice(html) and "hidden" in notice(html)


def test_the_notice_on_its_own_is_hidden_for_a_priced_model(
    alice_client: Client, two_models: list[str]
):
    assert "hidden" in notice(alice_client.get("/settings/price-notice/").content.decode())
