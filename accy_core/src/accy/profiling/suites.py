"""The profiling suites: exactly the original's cases, as (workload, elements, chain)."""

from __future__ import annotations

from accy.errors import InputError, known_names

__all__ = ["SUITES", "Case", "suite_cases"]

Case = tuple[str, int, int]


def _scan(name: str, sizes: tuple[int, ...], chain: int) -> list[Case]:
    return [(name, n, chain) for n in sizes]


#: Suite name → cases (workload, elements, chain), in run order.
SUITES: dict[str, list[Case]] = {
    "quick": [
        ("elementwise_chain", 256, 8), ("indexing_mix", 128, 2),
        ("reduction_row_norm", 32, 128), ("coordinate_mesh", 16, 16),
        ("nbody_all_pairs", 16, 3), ("mlp_two_layer", 32, 64), ("residual_block", 32, 64),
        ("halo_stencil", 16, 16), ("attention_softmax", 16, 32),
        ("transformer_block", 16, 32), ("decoder_block", 16, 32),
    ],
    "standard": [
        ("elementwise_chain", 4096, 64), ("elementwise_chain", 16384, 16),
        ("indexing_mix", 2048, 8), ("indexing_mix", 8192, 4),
        ("reduction_row_norm", 64, 256), ("coordinate_mesh", 64, 64),
        ("nbody_all_pairs", 32, 3), ("mlp_two_layer", 64, 128), ("residual_block", 64, 128),
        ("halo_stencil", 64, 64), ("attention_softmax", 32, 64),
        ("transformer_block", 32, 64), ("decoder_block", 32, 64),
    ],
    "scaling": [
        *_scan("elementwise_chain", (256, 1024, 4096), 32),
        *_scan("indexing_mix", (128, 512, 2048), 4),
        *_scan("reduction_row_norm", (16, 32, 64), 128),
        *_scan("nbody_all_pairs", (8, 16, 32), 3),
        *_scan("transformer_block", (8, 16, 32), 32),
        *_scan("decoder_block", (8, 16, 32), 32),
    ],
}


def suite_cases(name: str) -> list[Case]:
    """The cases of suite ``name``.

    Raises:
        InputError: unknown suite (lists the known ones).
    """
    if name not in SUITES:
        raise InputError(f"unknown profiling suite {name!r}; {known_names(SUITES, name)}")
    return list(SUITES[name])
