"""Plans: what a build, a dated snapshot or a refresh would reuse, ask and cost, before anything is paid.

`plan_facts` gathers what a plan knows before building (the questions, the work folder's caches, the documents, the
previous snapshot's figures); `snapshot_plan` sums the stages' own plans (`plan(ctx, facts)` in each stage module)
for `build --dry-run` and a snapshot; `embargo_plan` is an embargo's account in a plan; `refresh_plan` plans and
prices every topic of a refresh and refuses, writing nothing, a wrong input or a plan over the budget.
"""
