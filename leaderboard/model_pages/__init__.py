"""Scores where models live: the board's verified results on each model's Hub page, and the Hub's reports on the board.

* `verified`: what the board measured of each Hub model and reranker, as the `.eval_results` files of its repo
  (`freshstack_hf.repo.eval_results` has the task ids and the entries), one per snapshot, each entry linking the
  row's Detail view; the rows that get none, and why.
* `hub_files`: reading a file of a repo at a revision (its main branch, a pull request), and a Hub error told as
  what went wrong and what to do.
* `pull_requests`: those files proposed to the model repos, one pull request per repo, opened only where neither
  the repo's main branch nor an open pull request of the board holds the same values; each one audited. What
  `freshstack-hf admin eval-results` runs, and what the board runs for the rows whose submitter asked for it.
* `reports`: the results others published for the benchmark dataset (the Hub's dataset leaderboard and the files
  it names), read in the background and matched with the board's own, for the Reference tab.

Nothing here reads a live value (the embargoed questions' scores stay the board's until their embargo ends): only
the public results a row shows.
"""
