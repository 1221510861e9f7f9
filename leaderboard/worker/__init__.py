"""The evaluation worker: claims jobs from the store and runs each under a lease, in a process of its own.

`worker` is the loop, `job_process` how one job runs, `job_launcher` the process that forks them (started
without secrets, it imports the job code once per run), `job_contract` what a track's handler is given and returns,
`jobs` the registry of job kinds the tracks declare, `vetting` what is checked of a model before it is loaded,
`model_opening` how every job that measures a submitted model opens (payload, model folder vetted, dataset),
`judge_endpoint` the LLM endpoint jobs send text to; `sandbox` how a job process seals itself once its model is
loaded (what it may read and write), through `seal_syscalls` (Landlock and seccomp, the kernel's side);
`private_split` what the worker reads of the embargo's private repo, `live_pass` what a live job is handed of it (a
job folder of what ranking needs) and how the ranking it returns is scored.
"""
