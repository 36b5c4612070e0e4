"""The Redis databases the suite uses, counted on from REDIS_URL's own: one source for
the stacks that take them (`tests.stack`, `tests.conftest`, the scale-out test) and for
`tests.xdist_env`, which moves each test worker's past the others'."""

from __future__ import annotations

# The session's stack: no other test worker takes its tasks.
STACK_REDIS_DB = 1
# Stacks that live beside it: the scale-out test's and the MCP tests'.
SCALE_OUT_REDIS_DB = STACK_REDIS_DB + 1
MCP_STACK_REDIS_DB = STACK_REDIS_DB + 2
# All of them, the suite's own (0) first: four in a row, so that a 16-database Redis
# holds four test workers' (tests.xdist_env).
SUITE_REDIS_OFFSETS = (0, STACK_REDIS_DB, SCALE_OUT_REDIS_DB, MCP_STACK_REDIS_DB)
