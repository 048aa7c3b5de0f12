"""Every ACCY_* variable: default, valid values, and the message for a malformed value."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from accy import config
from accy.errors import InputError

_VARS = [v.name for v in config.VARIABLES]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in _VARS:
        monkeypatch.delenv(name, raising=False)


def test_defaults():
    assert config.num_threads() == (os.cpu_count() or 1)
    assert config.cache_dir().name.lower() == "accy"
    assert config.disk_cache_disabled() is False
    assert config.plugin_autoload_disabled() is False
    assert config.vulkan_device() is None
    assert config.vulkan_validation() is False
    assert config.cuda_device() == 0
    assert config.opencl_device() is None
    assert config.codegen_in_process() is False
    assert config.codegen_workers() == min(os.cpu_count() or 1, 4)


@pytest.mark.skipif(sys.platform != "linux", reason="the platformdirs-free default is Linux's")
@pytest.mark.parametrize("xdg", [None, "/somewhere/xdg-cache", "relative/ignored"])
def test_default_cache_dir_is_platformdirs_answer_without_importing_it(monkeypatch, xdg):
    platformdirs = pytest.importorskip("platformdirs")
    if xdg is None:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert config.cache_dir_str() == os.path.normpath(platformdirs.user_cache_dir("accy"))
    assert config.cache_dir() == Path(config.cache_dir_str())
    assert config.artifact_cache_dir() == Path(config.artifact_cache_dir_str())
    assert config.tuning_cache_path() == Path(config.tuning_cache_path_str())


def test_values_are_read_at_call_time(monkeypatch, tmp_path):
    monkeypatch.setenv("ACCY_NUM_THREADS", "3")
    monkeypatch.setenv("ACCY_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("ACCY_VULKAN_DEVICE", "1")
    monkeypatch.setenv("ACCY_CUDA_DEVICE", "2")
    monkeypatch.setenv("ACCY_OPENCL_DEVICE", "pocl")
    assert config.num_threads() == 3
    assert config.cache_dir() == Path(tmp_path)
    assert config.vulkan_device() == 1
    assert config.cuda_device() == 2
    assert config.opencl_device() == "pocl"
    monkeypatch.setenv("ACCY_OPENCL_DEVICE", "1")
    assert config.opencl_device() == 1
    monkeypatch.setenv("ACCY_NUM_THREADS", "5")
    assert config.num_threads() == 5


@pytest.mark.parametrize("text, value", [
    ("1", True), ("true", True), ("YES", True), ("on", True),
    ("0", False), ("False", False), ("no", False), ("off", False), ("", False),
])
@pytest.mark.parametrize("name, accessor", [
    ("ACCY_DISABLE_DISK_CACHE", config.disk_cache_disabled),
    ("ACCY_DISABLE_PLUGIN_AUTOLOAD", config.plugin_autoload_disabled),
    ("ACCY_VULKAN_VALIDATION", config.vulkan_validation),
    ("ACCY_CODEGEN_IN_PROCESS", config.codegen_in_process),
])
def test_booleans(monkeypatch, name, accessor, text, value):
    monkeypatch.setenv(name, text)
    assert accessor() is value


def test_bad_boolean_names_variable_expected_and_got(monkeypatch):
    monkeypatch.setenv("ACCY_DISABLE_DISK_CACHE", "maybe")
    with pytest.raises(InputError, match=r"^environment variable ACCY_DISABLE_DISK_CACHE: "
                       r"expected a boolean .*, got 'maybe'$"):
        config.disk_cache_disabled()


@pytest.mark.parametrize("name, accessor, bad, minimum", [
    ("ACCY_NUM_THREADS", config.num_threads, "0", 1),
    ("ACCY_NUM_THREADS", config.num_threads, "four", 1),
    ("ACCY_VULKAN_DEVICE", config.vulkan_device, "-1", 0),
    ("ACCY_CUDA_DEVICE", config.cuda_device, "gpu0", 0),
    ("ACCY_OPENCL_DEVICE", config.opencl_device, "-2", 0),
    ("ACCY_CODEGEN_WORKERS", config.codegen_workers, "0", 1),
])
def test_bad_integers(monkeypatch, name, accessor, bad, minimum):
    monkeypatch.setenv(name, bad)
    with pytest.raises(InputError) as info:
        accessor()
    assert str(info.value) == (
        f"environment variable {name}: expected an integer >= {minimum}, got {bad!r}")


def test_every_variable_in_the_source_is_declared_here():
    src = Path(config.__file__).parent
    used = set()
    for path in src.rglob("*.py"):
        used |= set(re.findall(r"\bACCY_[A-Z0-9_]+\b", path.read_text()))
    assert used <= set(_VARS), f"undeclared ACCY_* variables: {sorted(used - set(_VARS))}"
