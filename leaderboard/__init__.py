"""The FreshStack leaderboard: shared code in rooms named for what lives in them, one folder per track under `tracks/`.

* `store/`: everything a board holds, in one database. `store.Store` (systems and their results) is composed of its
  parts, `queue`, `blob_store`, `audit`, `moderation` and `rate_limit`, on one `database.Database`, whose `dialect`
  (SQLite or PostgreSQL, chosen from the URL) is the one place the code differs by database; the tables (`schema`,
  also where the tracks declare their kinds and what the store asks of each) and the records the store hands out
  (`records`); what a blob is (`blobs`, `ranking_blob`); bringing an older store up to date (`migrations`) and opening
  a store with an older runs folder (`archive`).
* `worker/`: the evaluation worker (`worker`, `job_process`, the `job_launcher` that forks jobs), what a track's
  job is given and returns (`job_contract`), the registry of job kinds (`jobs`), model vetting (`vetting`), the LLM
  endpoint jobs send text to (`judge_endpoint`), the embargo's private split a worker reads for live scores
  (`private_split`), what a live job is handed of it and what becomes of its ranking (`live_pass`), and the seal of
  a job process (`sandbox`, through the kernel's Landlock and seccomp in `seal_syscalls`).
* `page/`: the Gradio page. `app` assembles the tabs registered in `tabs`, which share a `page.Page`; what the tabs
  share (`display`, `paging`, `store_frame`, the Computing line `computing`, `sign_in`, the plain `first_paint`,
  the address of a row's Detail `detail_link`) and the Admin tab (`admin_tab`).
* `export/`: a board's store as a Hugging Face dataset folder and back (`board_export`, `board_import`,
  `board_format`, `board_card`). `deploy/`: a Space folder (`space`) and what its `app.py` runs (`space_app`).
* `model_pages/`: the board's verified results as the `.eval_results` files of each model's Hub repo (`verified`),
  proposed to the repos by pull request (`pull_requests`, through `hub_files`), and the Hub's reports on the
  benchmark read back beside the board's values (`reports`).
* `submission/`: what every submission goes through, whatever its kind: the outcome it is told (`outcome`), its
  checks' view of it (`upload`), file hygiene (`uploaded_files`), the live quota (`live_quota`), one audit row a
  call (`audited`) and `submitter.BaseSubmitter`, the kinds' checks run in their order.
* At the top: the board's `defaults` (where the store lives, the upload cap, the rate limit), the sanitizing of a
  submission's text (`sanitize`), scoring through the library (`scoring`), live scores on the embargoed questions
  (`live_scores`) and when one is shown (`live_release`), what every baseline row shares (`baseline_key`), hole fills
  of stored systems (`fills`), and the test-only fault points (`fault_points`).
* `cli/`: the board's commands, one module each, registered as `freshstack-hf` commands in `pyproject.toml`
  (`serve_board`, `board_worker`, `admin`, `drift_board`, `fill_board`, `board_space`, `remeasure_board`).
* `tracks/retrieval` (runs, models, baselines; the Leaderboard, After cutoff, Reference, Detail, Plots, Drift,
  Holes, Submit and About tabs), `tracks/reranking` (reranked runs and CrossEncoders on the fixed candidates, the
  Reranking tab) and `tracks/answers` (the RAG track, the Answers tab). Shared
  code knows the tracks only through three registries: the kinds of systems (`store.schema`), the job kinds
  (`worker.jobs`) and the tabs (`page.tabs`).

Nothing is imported here; the library (`freshstack_hf`) never imports this package.
"""
