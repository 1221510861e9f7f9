"""The evaluation worker: claims jobs from the store and runs each under a lease, in a process of its own.

`worker` is the loop, `job_process` how one job runs, `job_contract` what a track's handler is given and returns,
`jobs` the registry of job kinds the tracks declare.
"""
