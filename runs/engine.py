"""What a run is made of, for every side that starts one: which model it calls, the
user's settings it runs under (the worker's claim, the page's model picker, `ask`, the
retitling of a conversation), and what it works with (`engine_deps`). The engine's loop
is imported by `runs.runner` alone."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.conf import settings

from agents.attachments import Picture
from agents.clock import Clock
from agents.config import AgentConfig, OperatorLimits
from agents.context.window import ContextWindow, WindowSource
from agents.decisions import DecisionTree
from agents.model import Model
from agents.offline_model import OFFLINE_MODEL_NAME, OfflineModel
from agents.run.deps import RunDeps
from agents.tools import ToolRegistry
from chat.models import Conversation
from knowledge.citations import DOCUMENT_LINK, PASSAGE_LINK


def model_name_for(conversation: Conversation, *, user_choice: str) -> str:
    """The model a conversation's run uses: the one picked for the conversation, else
    the user's choice in their settings, else the server's ("" = offline)."""
    return conversation.model or user_choice or settings.ORACLE_MODEL


def model_for(name: str, *, read_pause: Callable[[], float] | None = None) -> Model:
    """The model called `name` (a LiteLLM model string), or the built-in offline model
    when `name` is empty or names it. Callers pass the user's choice, else the server's;
    a run passes its journal's `read_pause` (see `LiteLLMModel`)."""
    if not name or name == OFFLINE_MODEL_NAME:
        # Its sources link to the passages, the images it cannot see to their documents.
        return OfflineModel(passage_link=PASSAGE_LINK, document_link=DOCUMENT_LINK)
    # Imported here: LiteLLM takes seconds to import and the offline model needs none of it.
    from agents.litellm_model import LiteLLMModel

    return LiteLLMModel(
        name, api_base=settings.ORACLE_API_BASE or None, api_key=settings.ORACLE_API_KEY or None,
        read_pause=read_pause, max_tool_argument_bytes=settings.ORACLE_TOOL_ARGUMENTS_MAX_BYTES,
    )  # fmt: skip


def window_for(name: str, *, learned: bool = True) -> ContextWindow | None:
    """The context window of the model called `name`: the one a provider's refusal
    showed (remembered per model), else the operator's `ORACLE_MODEL_WINDOWS`, else
    LiteLLM's table; None for the offline model (no window to manage) and a model none
    of them knows (its first refusal, if it refuses, teaches it). `learned`: ask the
    database for the learnt one."""
    if not name or name == OFFLINE_MODEL_NAME:
        return None
    from agents.litellm_model import known_window
    from settings_ui.models import ModelWindow

    known = known_window(name)
    remembered = ModelWindow.objects.filter(model=name).first() if learned else None
    if remembered is not None:
        output = known.output_tokens if known else None
        return ContextWindow(remembered.tokens, output, WindowSource.LEARNED, remembered.ratio)
    if name in settings.ORACLE_MODEL_WINDOWS:
        return ContextWindow(settings.ORACLE_MODEL_WINDOWS[name], source=WindowSource.OPERATOR)
    return known


def remember_windows(refusals: list[dict[str, Any]]) -> None:
    """Keep the windows the providers' refusals showed (`context.refused` events), per
    model, for every run and worker after."""
    from django.db.models import F

    from settings_ui.models import ModelWindow

    for refusal in refusals:
        fields = {"tokens": int(refusal["window"]), "ratio": float(refusal.get("ratio") or 1.0)}
        updated = ModelWindow.objects.filter(model=refusal["model"]).update(
            **fields, refusals=F("refusals") + 1
        )
        if not updated:
            ModelWindow.objects.get_or_create(
                model=refusal["model"], defaults={**fields, "refusals": 1}
            )


def user_config(user: Any) -> tuple[AgentConfig, OperatorLimits]:
    """The settings a run starts (or continues) with: the user's, at this moment."""
    try:
        from settings_ui.services import agent_config_for, operator_limits
    except ImportError:  # the settings app is not there yet
        return AgentConfig(), OperatorLimits()
    return agent_config_for(user=user), operator_limits()


def engine_deps(
    *,
    model: Model,
    tree: DecisionTree,
    tools: ToolRegistry,
    clock: Clock | None = None,
    pictures: Mapping[int, Picture] | None = None,
    window: ContextWindow | None = None,
) -> RunDeps:
    """What a run works with, built here for the worker, `ask` and a subagent alike: the
    model, the decision tree under the run's limits, the tools, the clock (a
    subagent shares its parent's), and the images the user attached for a model that
    sees them (`runs.attachments`), and the model's context window (`window_for`)."""
    return RunDeps(
        model=model, tree=tree, tools=tools, clock=clock or Clock(), pictures=pictures or {},
        window=window,
    )  # fmt: skip
