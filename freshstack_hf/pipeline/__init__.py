"""The build: a topic definition turned into a dataset repo's revision, stage by stage, and kept fresh by a refresh.

Rooms, roughly in the order a build reads them:

* `sources/`: the questions sources (a Stack Exchange dump, BigQuery exports, saved API pages), one reader each,
  found through one table (`registry`).
* `config/`: the topic definition as read from YAML, checked whole before anything runs: the YAML reader and its
  problems (`reader`), a repository's entry (`repository`), the topic and its sections (`topic`), the embargo's
  settings (`embargo_settings`), a refresh's definitions file (`definitions`).
* `corpus/`: a repository read into documents: cloned and cut at a commit (`repos`), its files chosen
  (`file_selection`), chunked (`chunking`, `release_chunker`, `token_counts`), and the commits that reproduce a
  release (`pinning`).
* `offline/`: the offline backend, which answers every LLM stage without an endpoint.
* At the top: what every stage shares (`stage`: the context and atomic tables; `inputs`: every file a stage leaves;
  `memo`: what dated snapshots reuse), the LLM's side (`backends`: what a stage asks; `build_prompts`; `online`;
  `choose`: which backend), the account of a build (`accounting`) and of a public revision under an embargo
  (`public_account`), the embargo's date rule (`embargo`), dated snapshots (`snapshots`), where a build's work lives
  (`work_folder`), the runner that runs the stages in order (`runner`), and a judge's agreement with a reference
  repo (`judge_agreement`).
* `stages/`: the build's stages, one module each, in the one order they run (`stages.ORDER`).
* `planning/`: `--dry-run` and a refresh's plan, before anything is paid: what a plan knows (`plan_facts`), a
  snapshot's plan summed from its stages' own (`snapshot_plan`), the embargo's account in it (`embargo_plan`), and
  a refresh's plan of every topic, refused over its budget (`refresh_plan`).
* `refresh/`: the next dated snapshot of every topic, planned, built, checked and published (`run`), its private
  repos under an embargo (`private_repos`), a scheduled refresh checked (`schedule`) and its GitHub Actions workflow
  file (`workflow`).

Where a work folder lies is `work_folder`'s, below the planners: the runner imports the planners (for `--dry-run`),
the refresh imports the runner, and neither is imported back by anything in this package.
"""
