"""A plugin that fails on import, so tests can check that accy reports it and carries on.

Installed by ``scripts/setup.sh``; ``tests/test_plugin_discovery.py`` expects ``accy
backends`` to list it as ``plugin 'broken' (dist accy-broken-plugin) failed: ImportError:
...`` while every other backend keeps working.
"""

raise ImportError("accy_broken_plugin fails on import on purpose (a plugin-isolation test)")
