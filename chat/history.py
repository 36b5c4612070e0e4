"""A conversation's saved messages as its page shows them.

The page is a list of turns: a message the user sent and the runs that answered it.
A message edited and sent again, or an answer regenerated, keeps its earlier versions
on the page behind a "< 1 / 2 >" switch, the latest in view. Editing an earlier message
branches the conversation there: its earlier version keeps the rest of its branch (the
turns that followed it), shown with it. The run that is working
now is left empty: the WebSocket replays its events into it, so nothing shows twice.

What is built here is the data `templates/chat/_history.html` reads; its partials
include one another.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from agents.endings import SPENDING_CAP
from chat import fragments, selectors, tool_steps
from chat.models import Conversation, Message, Role, Run
from ops import caps
from runs import subagents


def history_turns(conversation: Conversation, active: Run | None) -> list[list[dict[str, Any]]]:
    """The conversation's turns, each a list of versions of a message the user sent,
    each version with the runs (and rows without one) that answered it."""
    rows = selectors.message_list(conversation=conversation).select_related("run")
    runs = list(selectors.run_list(conversation=conversation))  # first first
    latest = runs[-1] if runs else None
    users: list[Message] = []
    # Each user message's answers (a run, or rows saved without one), in order, and
    # what each of them said. A run answers its `user_message`; rows without one
    # belong to the message before them.
    answers: dict[int, list[Run | None]] = defaultdict(list)
    said: dict[object, list[Message]] = defaultdict(list)
    asked = 0
    for message in rows:
        if message.role == Role.USER:
            users.append(message)
            asked = message.pk
            continue
        run = message.run
        anchor = run.user_message_id if run is not None and run.user_message_id else asked
        key = run if run is not None else ("alone", anchor)
        if key not in said:
            answers[anchor].append(run)
        said[key].append(message)
    for run in runs:  # a run with nothing said yet (queued, or just regenerated)
        if run not in said and run.user_message_id is not None:
            answers[run.user_message_id].append(run)

    def shown_version(sent: Message | None, number: int, count: int) -> dict[str, Any]:
        answered_by = answers[sent.pk if sent is not None else 0]
        replies = []
        for run_number, run in enumerate(answered_by, start=1):
            key = run if run is not None else ("alone", sent.pk if sent else 0)
            shown = [] if run is not None and run == active else said[key]
            latest_run = run is not None and run == latest
            replies.append(
                {
                    "number": run_number,  # of `count`: the reply's version switch
                    "count": len(answered_by),
                    "section": _run_section(run, shown, latest=latest_run),
                }
            )
        switch = fragments.version_switch_context(number, count)
        return {
            "number": number,
            "count": count,
            "sent": fragments.user_message_context(sent, switch) if sent else None,
            "replies": replies,
            # an earlier version carries the rest of its branch; the latest one's
            # follows it on the page
            "rest": turns_after(sent.pk) if sent is not None and number < count else [],
        }

    next_turns = _branches(users)

    def turns_after(parent: int) -> list[list[dict[str, Any]]]:
        """The turns that follow `parent` (0: the first), each with its versions, along
        the latest version of each."""
        turns = []
        while versions := next_turns.get(parent):
            count = len(versions)
            turns.append([shown_version(v, n, count) for n, v in enumerate(versions, 1)])
            parent = versions[-1].pk
        return turns

    shown_turns = turns_after(0)
    if answers[0]:  # rows from before the first message the user sent
        shown_turns.insert(0, [shown_version(None, 1, 1)])
    return shown_turns


def _branches(users: list[Message]) -> dict[int, list[Message]]:
    """What the user sent after each of their messages (0: first), in order: more than
    one where they edited a message, which branches the conversation there. A message
    follows the one sent before it; an edited version follows what its original did."""
    follows: dict[int, int] = {}
    after: dict[int, list[Message]] = defaultdict(list)
    previous = 0
    for message in users:
        edit_of = (message.metadata or {}).get("edit_of")
        parent = follows.get(edit_of, previous) if edit_of else previous
        follows[message.pk] = parent
        after[parent].append(message)
        previous = message.pk
    return after


def _run_section(run: Run | None, messages: list[Message], *, latest: bool) -> dict[str, Any]:
    """A run's messages; the latest run's last System message offers what can follow."""
    shown = [_saved_message(message, run, latest=latest) for message in messages]
    systems = [i for i, message in enumerate(messages) if message.role == Role.SYSTEM]
    if run is not None and latest and systems and (run.can_continue or run.can_resume):
        message = messages[systems[-1]]
        problem = (message.metadata or {}).get("problem")
        # Asked now, not when the run stopped: once the cap renews, Continue is back.
        if caps.used_up_cap(run.conversation.owner_id) is not None:
            problem = SPENDING_CAP
        elif problem == SPENDING_CAP:
            problem = None
        actions = fragments.run_actions_context(
            str(run.pk), paused=False, reason=run.reason, problem=problem
        )
        shown[systems[-1]] = {
            "notice": fragments.system_message_context(
                f"msg-{message.pk}", message.metadata, message.content, actions
            )
        }
    return {
        "run_id": str(run.pk) if run is not None else None,
        "messages": [entry for entry in shown if entry is not None],
    }


def _saved_message(message: Message, run: Run | None, *, latest: bool) -> dict[str, Any] | None:
    """A saved row as its section shows it: an answer, a tool step or a System message
    (none for a step that only called tools: its tool rows follow)."""
    element = f"msg-{message.pk}"
    meta = message.metadata or {}
    if message.role == Role.ASSISTANT:
        if not message.content and not message.termination_reason:
            return None
        answer = fragments.assistant_message_context(
            element,
            message.content,
            message.termination_reason,
            meta.get("usage") or (run.counters if run is not None else None),
            run_id=str(run.pk) if run is not None and latest else "",
            metric=meta.get("limit_metric"),
            instructions=str(meta.get("instructions") or ""),
        )
        return {"answer": answer}
    if message.role == Role.TOOL:
        done = meta.get("status") == "done"
        sub = meta.get("subagent")
        if run is not None and not run.is_active:  # its run ended before it did
            sub = subagents.discard(sub)
        step = tool_steps.tool_step_context(
            element,
            str(meta.get("name", "")),
            meta.get("arguments"),
            message.content if done else "Not finished.",
            bool(meta.get("ok")) if done else False,
            subagent=sub,
            attachments=meta.get("attachments"),
            not_run=str(meta.get("not_run") or "") if done else "",
        )
        return {"step": step}
    return {"notice": fragments.system_message_context(element, meta, message.content)}
