"""Dask tests: skip the folder with one line when the ``accy-core[dask]`` extra is absent."""

import pytest

pytest.importorskip("dask.array", reason="accy.dask needs the extra: pip install 'accy-core[dask]'")
