"""Integrations that consume a FreshStack dataset repo: HF datasets helpers, the MTEB task, ir_datasets.

Each adapter is a thin module that imports its target library only when called; none imports another.
"""
