"""The share of every model call the user's tools take, shown beside the token budget:
each offered tool's description and schema go with each call, counted as the engine
counts them (agents.tools_share) with the model the user's runs use. The MCP servers'
tools are those a worker last recorded, of the servers the user has not switched off."""

from __future__ import annotations

from typing import Any, NamedTuple

from django.conf import settings

from agents.config import AgentConfig
from agents.offline_model import OfflineModel
from agents.tools import function_schema
from agents.tools_share import Counter, schemas_tokens
from settings_ui.policy import effective_model
from settings_ui.selectors import prices_loaded, subagent_types


class ToolsShare(NamedTuple):
    """How many tools each call carries, and their tokens."""

    tools: int
    tokens: int
    exact: bool  # counted with the model's own tokenizer (else about 4 characters a token)


def tools_share(*, user: Any, config: AgentConfig) -> ToolsShare:
    """The tools `user`'s runs are offered, and the tokens they take in each call."""
    from runs.tools import run_tools
    from toolbox.selectors import servers  # the Tools page's reads: toolbox reads settings_ui

    schemas = list(run_tools(user_id=user.pk, agent_types=subagent_types()).schemas)
    if settings.ORACLE_MCP_SERVERS:
        for server in servers(user=user):
            if server["enabled"] and server["state"] == "ready":
                schemas += [
                    function_schema(tool["name"], tool["description"], tool.get("parameters", {}))
                    for tool in server["tools"]
                ]
    count, exact = _counter(effective_model(config))
    return ToolsShare(len(schemas), schemas_tokens(count, schemas), exact)


def _counter(model: str) -> tuple[Counter, bool]:
    """The model's own count when it is the offline one, or LiteLLM is loaded already (a
    page does not wait seconds for its import); else about four characters a token."""
    if model and prices_loaded():
        from agents.litellm_model import LiteLLMModel

        return LiteLLMModel(model).count_tokens, True
    return OfflineModel().count_tokens, not model


def share_sentence(share: ToolsShare, budget: int) -> str:
    """ "Your 17 tools' descriptions take 2,750 tokens of every model call", and what to
    do when that passes the token budget."""
    about = "" if share.exact else "about "
    what = "tool's description takes" if share.tools == 1 else "tools' descriptions take"
    text = (
        f"Your {share.tools:,} {what} {about}{share.tokens:,} tokens of every model call, "
        "counted in the token budget."
    )
    if share.tokens >= budget:
        text += (
            " That is more than your budget: runs end before their first call. Switch "
            "off the MCP servers you do not need on the Tools page, or raise the budget."
        )
    return text
