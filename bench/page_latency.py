"""How long a streamed word takes to show in a real page, alone and among N streams.

`bench/load.py`'s clients read the WebSocket as the page does; this puts Chromium
(Debian's, headless) on one more conversation and times each word from the moment the
fake provider sent it (its stamp, `w{i}t{µs}`) to the moment it is in the page's DOM
(a MutationObserver notes each word the first time it appears in `#messages`). One
clock: everything runs on this machine. The other `--n - 1` conversations stream at
the same time through WebSocket clients, as in load.py.

    python bench/page_latency.py --n 50 --tokens 2000

Prints the page's p50 / p99 / max in ms, and the other streams' figures as load.py
does.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load  # bench/load.py: the stack and the WebSocket clients

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# In the page: the first moment (µs since the epoch) each stamped word is in #messages.
WATCH = """document.addEventListener("DOMContentLoaded", () => {
  if (!document.getElementById("messages")) return;
  window.__seen = {};
  const word = /\\bw(\\d+)t(\\d+)\\b/g;
  const note = (text) => {
    const at = (performance.timeOrigin + performance.now()) * 1000;
    for (const [, number, stamp] of text.matchAll(word)) {
      if (!(number in window.__seen)) window.__seen[number] = [at, Number(stamp)];
    }
  };
  new MutationObserver((changes) => {
    for (const change of changes) {
      if (change.type === "characterData") note(change.target.data);
      for (const node of change.addedNodes) note(node.textContent || "");
    }
  }).observe(document.getElementById("messages"),
             {childList: true, subtree: true, characterData: true});
});"""


async def page_client(stack: load.Stack, session: str, tokens: int) -> list[float]:
    """One conversation in Chromium: sends its message from the composer, waits for the
    run to finish, and returns each word's delay, ms."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = await browser.new_context()
        await context.add_cookies([{"name": "sessionid", "value": session, "url": stack.url}])
        await context.add_init_script(WATCH)  # on the conversation's page, before any word
        page = await context.new_page()
        await page.goto(f"{stack.url}/")
        # The first page's form (by name: also what the page was before 2026-11-23).
        await page.fill("main textarea[name=content]", "Page latency: stream the stamped words.")
        await page.click("main form button[type=submit]")
        await page.wait_for_selector("#messages")
        await page.wait_for_selector("#gauges[data-status=finished]", timeout=600_000)
        seen: dict[str, list[float]] = await page.evaluate("window.__seen")
        await browser.close()
    if len(seen) != tokens:
        print(f"the page showed {len(seen)} of {tokens} words", file=sys.stderr)
    return [(at - stamp) / 1000 for at, stamp in seen.values()]


async def both(stack: load.Stack, args: Any, sessions: list[str]) -> list[float]:
    others = [load.Conversation(n, "ws", args.tokens) for n in range(args.n - 1)]
    page = asyncio.create_task(page_client(stack, sessions[0], args.tokens))
    if others:
        await load.run_clients(stack, sessions, others, args.timeout, args.ramp)
        await load.check_clients(stack, others)  # their ends and saved answers
        report_others(others, args.tokens)
    return await page


def report_others(clients: list[load.Conversation], tokens: int) -> None:
    figures = load.totals(clients, tokens)
    delivery = figures["delivery_ms"]
    print(
        f"the other {len(clients)} streams (WebSocket clients): {figures['completed']} "
        f"completed, delivery ms p50 / p99 / max {delivery['p50']} / {delivery['p99']} / "
        f"{delivery['max']}"
    )


def main() -> int:
    args = load.parse(sys.argv[1:])
    with load.running_stack(args) as stack:
        stack.tokens = load.create_users(stack, min(args.n, load.USERS))
        sessions = asyncio.run(load.log_in_all(stack.url, len(stack.tokens)))
        delays = asyncio.run(both(stack, args, sessions))
    delays.sort()
    if not delays:
        print("the page showed no word")
        return 1
    p99 = delays[min(len(delays) - 1, round(0.99 * (len(delays) - 1)))]
    print(
        f"page (Chromium), {args.n} streams at once, {args.tokens} words each: "
        f"{len(delays)} words shown, ms from the provider to the page p50 / p99 / max "
        f"{statistics.median(delays):.0f} / {p99:.0f} / {delays[-1]:.0f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
