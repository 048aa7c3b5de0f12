"""Mutated IR texts: ``parse_module`` (which verifies) succeeds or raises an accy error.

Never a raw exception (RecursionError, IndexError, KeyError, ValueError from int(), ...) and
never an InternalError; a text that parses prints and parses back to the same text.
"""

from __future__ import annotations

import accy
import pytest
from accy.errors import AccyError, InternalError
from hypothesis import given
from hypothesis import strategies as st

from .gen import programs
from .mutate import mutants, seeds
from .profile import fuzz_settings

pytestmark = pytest.mark.fuzz

SEEDS = seeds()


def _check(text: str) -> None:
    try:
        module = accy.parse_module(text)
    except InternalError as e:
        raise AssertionError(f"InternalError on:\n{text}") from e
    except AccyError:
        return
    except Exception as e:
        raise AssertionError(f"raw {type(e).__name__}: {e} on:\n{text}") from e
    printed = module.to_text()
    assert accy.parse_module(printed).to_text() == printed


@fuzz_settings(400)
@given(mutants(st.sampled_from(SEEDS)))
def test_mutated_golden_texts_parse_or_raise_accy_errors(text: str) -> None:
    _check(text)


@fuzz_settings(100)
@given(st.data())
def test_mutated_generated_programs_parse_or_raise_accy_errors(data) -> None:
    program = data.draw(programs(), label="program")
    _check(data.draw(mutants(st.just(program.module.to_text())), label="mutant"))


def test_seeds_are_valid() -> None:
    """The mutator starts from texts that parse (else every mutant fails trivially)."""
    assert len(SEEDS) >= 5
    for text in SEEDS:
        accy.parse_module(text)
