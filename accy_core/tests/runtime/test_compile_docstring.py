"""``help(accy.compile)`` is a full reference (it was one line pointing elsewhere), and its
example runs."""

from __future__ import annotations

import doctest
import inspect
import pydoc

import accy
import accy.runtime


def test_help_documents_args_returns_errors_and_an_example() -> None:
    text = pydoc.render_doc(accy.compile, renderer=pydoc.plaintext)
    for section in ("Args:", "Returns:", "Raises:", "Example:"):
        assert section in text, section
    for name in inspect.signature(accy.compile).parameters:
        assert f"{name}:" in text, f"parameter {name} is not documented"
    for error in ("InputError", "VerifyError", "BackendUnavailable", "CapabilityError"):
        assert error in text


def test_same_parameters_as_the_runtime_compile() -> None:
    assert (inspect.signature(accy.compile).parameters.keys()
            == inspect.signature(accy.runtime.compile).parameters.keys())


def test_the_example_runs() -> None:
    finder = doctest.DocTestFinder()
    (test,) = [t for t in finder.find(accy.compile, "accy.compile") if t.examples]
    result = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS).run(test)
    assert result.failed == 0 and result.attempted >= 5
