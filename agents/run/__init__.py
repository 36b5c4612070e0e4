"""The steps of a run, each a module of its own; `agents.loop` drives them."""
