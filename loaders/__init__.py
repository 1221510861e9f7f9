"""Integrations that consume a FreshStack dataset repo: HF datasets helpers, the MTEB tasks, ir_datasets.

Each adapter is a thin module that imports its target library only when used and calls freshstack_hf for the
real work; `loaders.source` decides which repo they all read (FRESHSTACK_DATASET, else the published repo
at its pinned revision). The one-liner for each way in is in `loaders.hf_datasets`. With the project
installed, `import mteb` / `import ir_datasets` register FreshStack by themselves (`loaders.import_hook`).
"""
