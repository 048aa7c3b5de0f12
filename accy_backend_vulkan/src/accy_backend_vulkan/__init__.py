"""accy's Vulkan backend: kernel IR → SPIR-V (LLVM's SPIR-V target) → any Vulkan device.

The package is a placeholder until its plugin module lands: it installs and imports, and
registers nothing yet. When it does, ``plugin.py`` will declare the backend through the
``accy_backends()`` hook without importing the ``vulkan`` package; that import happens in
the descriptor's ``probe()`` and ``open()``.
"""

__version__ = "0.1.0"
