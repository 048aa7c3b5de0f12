"""accy's kernel-library families (gather, scatter, SpMV, SpMM, sort, random, scan, ...).

The package is a placeholder until the families land: it installs and imports, and
registers nothing yet. Families will be declared through the ``accy_kernel_families()``
hook and written once in the kernel DSL, so that each runs on every backend.
"""

__version__ = "0.1.0"
