"""``accy backends`` and the command-line driver: listing, plugin errors, exit codes."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import EntryPoint

import accy.plugins as plugins
import pytest
from accy.cli import backends as backends_cli
from accy.cli.main import main
from accy.errors import InputError


@pytest.fixture
def broken_plugin_installed(tmp_path, monkeypatch):
    (tmp_path / "cli_broken_plugin.py").write_text("raise ImportError('needs libfoo')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("ACCY_DISABLE_PLUGIN_AUTOLOAD", "1")
    plugins.reset_for_tests(plugins.PluginManager(
        entry_points=[EntryPoint("foo", "cli_broken_plugin", "accy")]))
    yield
    plugins.reset_for_tests()


def test_backends_lists_backends_then_failures(broken_plugin_installed, capsys):
    assert main(["backends", "--all"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "recording: available (in-memory recorder) [testing only]",
        "plugin 'foo' (dist unknown) failed: ImportError: needs libfoo",
    ]


def test_testing_only_backends_are_listed_only_when_asked_for(broken_plugin_installed, capsys):
    assert main(["backends"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "plugin 'foo' (dist unknown) failed: ImportError: needs libfoo"]


def test_help_lists_every_installed_command(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "backends" in out and "list backends, whether each runs here" in out


def test_no_command_prints_usage_and_exits_2(capsys):
    assert main([]) == 2
    assert "usage: accy" in capsys.readouterr().err


def test_accy_error_prints_one_line_and_exits_2(monkeypatch, capsys):
    def boom(**_):
        raise InputError("environment variable ACCY_X: expected a boolean, got 'maybe'")

    monkeypatch.setattr(backends_cli, "backend_lines", boom)
    assert main(["backends"]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        "error: environment variable ACCY_X: expected a boolean, got 'maybe'\n")
    assert "Traceback" not in captured.err


def test_python_dash_m_accy_runs_in_a_fresh_process():
    proc = subprocess.run([sys.executable, "-m", "accy", "backends", "--all"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "recording: available (in-memory recorder) [testing only]" in proc.stdout
