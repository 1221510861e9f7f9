"""The retrieval track's worker jobs and what queues them: a submitted model retrieved and scored (`model_job`,
with what it costs to run measured on the way, `efficiency`), the project's baseline rows (`baseline_rows`: planned,
computed and scored; `baseline_job`: the worker's job for one of them), a stored system's holes judged (`fill_job`),
a stored run's ranking re-scored on a newer revision (`rescore_job`), and every stored system measured again on a
revision the board has not seen (`remeasure`).

Each job module lists its kinds in `JOB_KINDS`, which `leaderboard.worker.jobs` gathers.
"""
