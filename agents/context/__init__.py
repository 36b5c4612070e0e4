"""The model's context window: knowing it, keeping every request inside it, and
saying what was shortened to get there (SPEC section 3, "The context window").

`window` knows a model's window and reads one from a provider's refusal; `view` makes
what is sent of a run's history (summary, stubs, cuts), never changing the history;
`transcript` writes what a compaction call is asked to summarise; `ledger` is what a
run keeps of it (the summary, the learned window, the figures). The step that uses
them in the loop is `agents.run.compaction`.
"""
