"""Pipeline text both ways, option kinds, error messages and the lazy registry."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from typing import ClassVar

import pytest
from accy.errors import ParseError, PassError
from accy.passes import (
    Pass,
    get_pass_class,
    get_pipeline,
    parse_pipeline,
    pass_names,
    pipeline_names,
    print_pipeline,
    register_pass,
    register_pipeline,
)


@register_pass
@dataclass(frozen=True)
class OptionsTestPass(Pass):
    """A pass with one option of every kind (test only)."""

    name: ClassVar[str] = "test-options"
    summary: ClassVar[str] = "test pass with every option kind"
    count: int = 3
    ratio: float = 0.5
    enabled: bool = False
    label: str = "plain"
    tile_sizes: tuple[int, ...] = (32, 32)
    mode: str = field(default="fast", metadata={"choices": ("fast", "exact")})

    def run(self, module, ctx):
        return False


ROUND_TRIP = [
    "",
    "canonicalize",
    "canonicalize,einsum-lowering{strategy=beam,beam-width=8}",
    (
        "canonicalize,einsum-lowering{strategy=beam,beam-width=8},"
        "indexing-lowering{kernel-library=enabled}"
    ),
    "einsum-lowering{beam-width=2}",
    "test-options",
    "test-options{count=-4,ratio=1e-05,enabled=true,label=a.b/c-d:e,tile-sizes=[],mode=exact}",
    'test-options{label="",tile-sizes=[1,-2,3]}',
    'test-options{label="with space, comma {brace} \\"quote\\" \\\\ slash"}',
    'test-options{ratio=inf,label="true"}',
    "test-options{ratio=-0.0},cse,dce,test-options{count=3}",
]


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_printed_text_parses_and_prints_back_identically(text: str) -> None:
    passes = parse_pipeline(text)
    assert print_pipeline(passes) == text
    assert parse_pipeline(print_pipeline(passes)) == passes


def test_parse_gives_the_passes_and_options() -> None:
    passes = parse_pipeline("canonicalize,einsum-lowering{strategy=beam,beam-width=8}")
    assert [p.name for p in passes] == ["canonicalize", "einsum-lowering"]
    assert passes[1].strategy == "beam" and passes[1].beam_width == 8
    (p,) = parse_pipeline('test-options{tile-sizes=[4,8],ratio=2,label="x y",enabled=false}')
    assert p == OptionsTestPass(ratio=2.0, enabled=False, label="x y", tile_sizes=(4, 8))
    assert isinstance(p.ratio, float)


def test_instances_print_given_and_non_default_options_in_field_order() -> None:
    assert str(OptionsTestPass()) == "test-options"
    assert str(OptionsTestPass(mode="exact", count=3)) == "test-options{count=3,mode=exact}"
    assert print_pipeline([OptionsTestPass(tile_sizes=[1, 2])]) == "test-options{tile-sizes=[1,2]}"
    # Options written in another order print in field order.
    (p,) = parse_pipeline("test-options{mode=exact, count=1}")
    assert str(p) == "test-options{count=1,mode=exact}"


def test_whitespace_and_newlines_are_ignored() -> None:
    passes = parse_pipeline(" canonicalize ,\n  test-options { count = 2 , enabled = true } ")
    assert print_pipeline(passes) == "canonicalize,test-options{count=2,enabled=true}"


def test_unknown_pass_lists_known_passes() -> None:
    with pytest.raises(ParseError) as info:
        parse_pipeline("canonicalize,canonicalise")
    msg = str(info.value)
    assert msg.startswith(
        "1:14: pipeline: unknown pass 'canonicalise'; did you mean 'canonicalize'? known: ")
    for name in ("canonicalize", "cse", "dce", "einsum-lowering", "fusion", "legalize"):
        assert name in msg
    assert info.value.column == 14


def test_unknown_option_lists_the_pass_options() -> None:
    with pytest.raises(ParseError) as info:
        parse_pipeline("einsum-lowering{strategy=beam,beam_width=8}")
    assert info.value.reason == (
        "pipeline: pass 'einsum-lowering' has no option 'beam_width'; options: "
        "strategy: greedy|beam = 'greedy', beam-width: int = 8"
    )
    assert info.value.column == 31


@pytest.mark.parametrize(
    ("text", "expected", "column"),
    [
        (
            "einsum-lowering{strategy=best}",
            "option 'strategy' expects one of greedy, beam, got 'best'",
            26,
        ),
        ("einsum-lowering{beam-width=8.5}", "option 'beam-width' expects an int, got '8.5'", 28),
        ("test-options{enabled=yes}", "option 'enabled' expects true or false, got 'yes'", 22),
        ("test-options{ratio=fast}", "option 'ratio' expects a float, got 'fast'", 20),
        (
            "test-options{tile-sizes=4}",
            "expected '[' to open the int list of option 'tile-sizes'",
            25,
        ),
    ],
)
def test_bad_value_names_the_expected_type(text: str, expected: str, column: int) -> None:
    with pytest.raises(ParseError) as info:
        parse_pipeline(text)
    assert expected in info.value.reason
    assert info.value.column == column


@pytest.mark.parametrize(
    ("text", "expected", "column"),
    [
        ("canonicalize,,cse", "expected a pass name, got ','", 14),
        ("canonicalize cse", "expected ',' between passes, got 'c'", 14),
        ("einsum-lowering{strategy=beam", "expected ',' between options, got end of text", 30),
        ("einsum-lowering{strategy}", "expected '=' after option 'strategy', got '}'", 25),
        ('test-options{label="open', "unterminated string", 20),
        ("test-options{count=1,count=2}", "option 'count' is given twice", 22),
        ("cse,\ndce{", "expected an option name of pass 'dce', got end of text", 5),
    ],
)
def test_malformed_text_reports_the_column(text: str, expected: str, column: int) -> None:
    with pytest.raises(ParseError) as info:
        parse_pipeline(text)
    assert expected in info.value.reason
    assert info.value.column == column


def test_parse_error_shows_a_caret_under_the_column() -> None:
    with pytest.raises(ParseError) as info:
        parse_pipeline("cse,nosuch")
    assert str(info.value).endswith("\n  cse,nosuch\n      ^")


def test_constructing_with_a_bad_choice_is_a_pass_error() -> None:
    with pytest.raises(PassError, match="option 'mode' must be one of fast, exact, got 'slow'"):
        OptionsTestPass(mode="slow")


def test_get_pass_class_unknown_lists_known() -> None:
    with pytest.raises(PassError, match=r"unknown pass 'nosuch'; known: .*canonicalize"):
        get_pass_class("nosuch")


def test_registering_another_class_under_a_taken_name_fails_naming_both() -> None:
    @dataclass(frozen=True)
    class Impostor(Pass):
        name: ClassVar[str] = "cse"

    with pytest.raises(PassError, match=r"pass 'cse' is registered twice: by accy-core and by "):
        register_pass(Impostor)
    register_pass(OptionsTestPass)  # the same class again is fine


def test_a_pass_with_an_unsupported_option_type_is_refused() -> None:
    @dataclass(frozen=True)
    class BadPass(Pass):
        name: ClassVar[str] = "test-bad-option"
        mapping: dict = field(default_factory=dict)

    with pytest.raises(PassError, match="option 'mapping' has unsupported type"):
        register_pass(BadPass)


def test_named_pipelines() -> None:
    register_pipeline("test-cleanup", "cse,dce")
    assert get_pipeline("test-cleanup") == "cse,dce"
    register_pipeline("test-cleanup", "cse,dce")  # same text again is fine
    with pytest.raises(PassError, match="pipeline 'test-cleanup' is registered twice"):
        register_pipeline("test-cleanup", "dce")
    assert {"contract", "tensor", "dispatch", "memory", "kernel", "target"} <= set(pipeline_names())
    with pytest.raises(PassError, match=r"unknown pipeline 'nosuch'; known: .*contract"):
        get_pipeline("nosuch")


def test_listing_pass_names_imports_no_pass_module() -> None:
    code = (
        "import sys; import accy.passes as p; names = p.pass_names(); "
        "print(names); print(sorted(m for m in sys.modules if m.startswith('accy.passes.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    names_line, loaded_line = out.stdout.splitlines()
    names, loaded = eval(names_line), eval(loaded_line)
    assert {"canonicalize", "einsum-lowering", "fusion", "legalize"} <= set(names)
    pass_modules = {"accy.passes." + n.replace("-", "_") for n in names}
    assert not pass_modules & set(loaded), loaded


def test_pass_names_include_registered_test_pass() -> None:
    assert "test-options" in pass_names()
    assert get_pass_class("test-options") is OptionsTestPass
