"""Fixtures shared by the actor tests."""

import asyncio

import pytest


@pytest.fixture(scope="module")
def loop():
    # One loop for the module: litellm caches HTTP clients per loop.
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()
