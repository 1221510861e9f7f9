"""The topic definition a build starts from, read from YAML and checked whole before any stage runs.

`reader` is the YAML reader that collects every problem with its dotted key (and `${VAR}` expansion, relative
paths); `repository` reads one entry of `corpus.repositories`; `topic` holds the `TopicConfig` and its sections and
reads a topic definition; `embargo_settings` reads `embargo_days:` / `private_repo:` and says where a private repo
lies; `definitions` reads a refresh's definitions file (one topic, or a `topics:` list sharing one embargo).
"""
