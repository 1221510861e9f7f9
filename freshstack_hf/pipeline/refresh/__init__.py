"""The refresh: the next dated snapshot of every topic, made by one command a schedule can run unattended.

`run` plans (`pipeline.planning`), builds (`pipeline.runner`), checks and publishes the snapshot within a budget and
compares it with the previous one; `private_repos` stages and publishes the embargoed questions' private revisions
before the public one; `schedule` checks a scheduled refresh (`refresh --write-workflow`) before anything is written,
and `workflow` is the GitHub Actions workflow file that runs it.
"""
