"""Fakes of model providers for tests and benchmarks: nothing else is ever faked."""
