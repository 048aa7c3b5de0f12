"""accy's Vulkan backend: kernel IR → SPIR-V (LLVM's SPIR-V target) → any Vulkan device.

``plugin`` declares the backend (no heavy import), ``target`` is the pure code-generation
description, ``toolchain`` patches/validates SPIR-V, ``driver`` runs it through the ``vulkan``
package (the only module importing it).
"""

__version__ = "0.1.0"
