"""What every submission shares, whatever its kind: the outcome the submitter is told, the audit row of each call,
and the checks several kinds make, each a small named step. Its rooms, one idea a module:

* `outcome`: what the submitter is told (`SubmitStatus`, `SubmitOutcome`: the page's Markdown, the API's JSON, the
  audit log's line) and the refusals the kinds share (`refused`, `refused_with_problems`, `parse_refusal`).
* `upload`: one submission as its checks see it (`Upload`, who sends it: `identity_of`) and a step's shape (`Check`).
* `uploaded_files`: an uploaded file's hygiene (its hash, its size, a gzip bomb).
* `live_quota`: an identity's live scorings in 7 days, and what a submission past the quota carries (`LiveWithheld`).
* `audited`: the `@audited` mark of each public submit method, one audit row a call.
* `submitter`: `BaseSubmitter`, a kind's checks run in their order, and the steps the kinds share.

The kinds' lists share their shape: cheap refusals first (no file, over the size cap, unusable name, description or
link; a run's cap applies to what the board keeps of it, so its list checks it after the parse), then the dedupe
lookup (`dedupe`: a content hash, always together with the dataset revision, so a resubmission is answered with the
stored row and never scored twice), then the per-identity rate limit (`rate_limit`: it counts what it lets through,
and it stands after every dedupe of its list, so a duplicate is never counted), and only then the expensive part:
the kind's strict parser (every problem listed with its line; nothing is stored on any problem) and scoring, or the
queueing of a worker's job. A parser's refusal is counted: its list puts the rate limit before the parse (answers),
or tells the refusal once the rate limit has counted it (a run, whose dedupe key is its parsed ranking's). The kinds
a worker also scores live on the embargoed questions (models, rerankers) then count the submission against the
identity's live scorings in the last 7 days (`live_quota`): past that quota it is still queued and scored on the
public questions, and its job carries the live status that says why there is no live score. The board's
re-measuring of a stored model on a new snapshot (`tracks.retrieval.jobs.remeasure`) takes the same step for the model's
owner: its hourly rate limit is off, its live quota is not.

Nothing is imported here.
"""
