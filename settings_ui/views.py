"""The settings page: every field saves itself (htmx), or the whole form posts without JS."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.http import AuthenticatedHttpRequest
from accounts.services import api_token_create, api_token_revoke
from agents.config import FIELDS_BY_NAME, AgentConfig, ConfigError
from settings_ui import selectors
from settings_ui.forms import LIMIT_ACTION_SENTENCES, AgentConfigForm
from settings_ui.policy import effective_model, operator_limits, server_default_model
from settings_ui.services import agent_config_for, agent_config_reset, agent_config_update
from settings_ui.tools_share import share_sentence, tools_share

# A new token's secret, kept in the session from its creation to the next page (POST,
# redirect, GET) and no longer: a reload shows it no more, and creates nothing.
NEW_TOKEN_SESSION_KEY = "settings_new_api_token"


def _price_notice(config: AgentConfig) -> str:
    """Why cost limits cannot apply to the chosen model, or "" when they can."""
    model = effective_model(config)
    if not model:
        return "The offline model is free and has no price, so the cost limit cannot apply to it."
    if not selectors.model_has_price(model):
        return (
            f"{model} has no price in LiteLLM's price list: its calls count as costing "
            "nothing, so the cost limit cannot apply to it."
        )
    return ""


def _page(
    request: AuthenticatedHttpRequest, form: AgentConfigForm, *, status: int = 200, **extra: Any
) -> HttpResponse:
    # The first page after a start does not wait for LiteLLM's price list: the notice
    # follows from `price_notice`, which loads it beside the request thread.
    later = bool(effective_model(form.config)) and not selectors.prices_loaded()
    context = {
        "form": form,
        "price_notice": "" if later else _price_notice(form.config),
        "price_notice_later": later,
        "limit_action_sentences": LIMIT_ACTION_SENTENCES,
        "current_action": form.config.limit_action.value,
        "default_model": server_default_model(),
        "hard_caps": operator_limits(),
        "tokens": selectors.api_token_list(user=request.user),
        "tools_share": share_sentence(
            tools_share(user=request.user, config=form.config), form.config.token_budget
        ),
        **extra,
    }
    return render(request, "settings_ui/settings.html", context, status=status)


@require_http_methods(["GET", "POST"])
def settings_page(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The page; a POST (no JavaScript) saves every field at once, or none."""
    config = agent_config_for(user=request.user)
    if request.method != "POST":
        new_token = request.session.pop(NEW_TOKEN_SESSION_KEY, None)
        return _page(request, AgentConfigForm(config=config), new_token=new_token)
    form = AgentConfigForm(request.POST, config=config)
    if form.is_valid():
        try:
            agent_config_update(user=request.user, raw=form.raw())
        except ConfigError as error:
            _add_errors(form, error)
        else:
            messages.success(request, "Settings saved.")
            return redirect("settings")
    return _page(request, form, status=400)


@require_POST
def setting_save(request: AuthenticatedHttpRequest, name: str) -> HttpResponse:
    """Save one field (htmx autosave); answers its status line: "Saved" or the errors."""
    if name not in FIELDS_BY_NAME:
        raise Http404("No such setting.")
    form = AgentConfigForm(request.POST, config=agent_config_for(user=request.user), only=[name])
    saved = None
    if form.is_valid():
        try:
            saved = agent_config_update(user=request.user, raw=form.raw())
        except ConfigError as error:
            _add_errors(form, error)
    context = {
        "control": form.control(name),
        "saved": saved is not None,
        "price_notice": _price_notice(saved) if saved and name == "model" else None,
    }
    return render(request, "settings_ui/_status.html", context, status=200 if saved else 400)


@require_GET
def price_notice(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The page's price notice, for a page drawn before this process had loaded LiteLLM's
    price list: loaded here, in this request's thread, while others are served."""
    notice = _price_notice(agent_config_for(user=request.user))
    return render(request, "settings_ui/_price_notice.html", {"price_notice": notice})


@require_POST
def settings_reset(request: AuthenticatedHttpRequest) -> HttpResponse:
    agent_config_reset(user=request.user)
    messages.success(request, "Every setting is back to its default.")
    return redirect("settings")


@require_POST
def api_token_new(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Create a token; the page after the redirect shows its secret, once (the database
    keeps only its hash)."""
    name = request.POST.get("name", "").strip()
    _, raw = api_token_create(user=request.user, name=name)
    request.session[NEW_TOKEN_SESSION_KEY] = raw
    return redirect(reverse("settings") + "#new-token")


@require_POST
def api_token_delete(request: AuthenticatedHttpRequest, token_id: int) -> HttpResponse:
    """Revoke one of the user's tokens; any other id (gone, or another user's) changes
    nothing: 404, on the page, which says so."""
    token = selectors.api_token_get(user=request.user, token_id=token_id)
    if token is None:
        messages.error(request, "No such token: nothing was revoked.")
        form = AgentConfigForm(config=agent_config_for(user=request.user))
        return _page(request, form, status=404)
    api_token_revoke(token=token)
    messages.success(request, f"Token {token.hint}… revoked.")
    return redirect("settings")


def _add_errors(form: AgentConfigForm, error: ConfigError) -> None:
    for name, field_messages in error.errors.items():
        form.add_error(name if name in form.fields else None, field_messages)
