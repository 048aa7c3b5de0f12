"""The compiler's tuning token (read without importing accy.tuning) is the tuning cache's."""


def test_compiler_reads_the_tuning_token_the_cache_gives(tmp_path, monkeypatch):
    from accy.runtime.compiler import _tuning_token
    from accy.tuning.cache import TuningCache

    monkeypatch.setenv("ACCY_TUNING_CACHE", str(tmp_path / "t.json"))
    assert _tuning_token() == TuningCache().token() == (0, 0)
    (tmp_path / "t.json").write_text("{}")
    assert _tuning_token() == TuningCache().token() != (0, 0)
