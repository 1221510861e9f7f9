"""The board's commands, one module per command, each a `freshstack-hf` command through the
`freshstack_hf.commands` entry points of `pyproject.toml` (a module holds `NAME`, `HELP`, `add_arguments` and `run`).
Module names say what the command does to the board, so none repeats a room's module name (`worker.worker`,
`page.app`, `deploy.space`).

* `serve_board`: `freshstack-hf leaderboard`, the board's page (and, unless `--no-worker`, a worker in its process).
* `board_worker`: `freshstack-hf worker`, an evaluation worker on the store's job queue.
* `admin`: `freshstack-hf admin`, moderation, the audit trail, export and import of the store, the model pages'
  `.eval_results` files.
* `drift_board`: `freshstack-hf drift-board`, the drift report with every system the board stores.
* `fill_board`: `freshstack-hf fill-board`, a stored system's holes filled with the board's judge.
* `board_space`: `freshstack-hf space`, a Hugging Face Space folder that serves the board.
* `remeasure_board`: `freshstack-hf remeasure`, every stored system measured again on a new revision.
"""
