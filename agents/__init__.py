"""Oracle's agent engine: pure async Python, no Django (see SPEC sections 2-6)."""
