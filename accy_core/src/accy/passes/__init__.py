"""Passes, pipelines and the six compilation stages.

A pass is a frozen dataclass (:class:`Pass`) whose fields are its options; pipelines are
text (``canonicalize,einsum-lowering{strategy=beam,beam-width=8}``) that parses to passes
and prints back byte for byte; :class:`PassManager` runs passes with records; the stages
``contract → tensor → dispatch → memory → kernel → target`` are registered pipelines run by
:func:`run_stages`. Importing this package imports no pass module: the registry is lazy.
"""

from accy.passes.analysis import Analysis, AnalysisManager, Liveness, UseCounts
from accy.passes.base import AnalysisRecord, Pass, PassContext, PassOption, PassRecord
from accy.passes.manager import PassManager, merge_records
from accy.passes.pipeline import parse_pipeline, print_pass, print_pipeline
from accy.passes.registry import (
    get_pass_class,
    get_pipeline,
    pass_names,
    pipeline_names,
    plugin_problems,
    register_pass,
    register_pipeline,
)
from accy.passes.stages import STAGES, StageProduct, product_fingerprint, run_stages

__all__ = [
    "STAGES",
    "Analysis",
    "AnalysisManager",
    "AnalysisRecord",
    "Liveness",
    "Pass",
    "PassContext",
    "PassManager",
    "PassOption",
    "PassRecord",
    "StageProduct",
    "UseCounts",
    "get_pass_class",
    "get_pipeline",
    "merge_records",
    "parse_pipeline",
    "pass_names",
    "pipeline_names",
    "plugin_problems",
    "print_pass",
    "print_pipeline",
    "product_fingerprint",
    "register_pass",
    "register_pipeline",
    "run_stages",
]
