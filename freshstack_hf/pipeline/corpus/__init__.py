"""A topic's corpus: its repositories read into documents, as the `corpus` stage and `pin-commits` need them.

`repos` turns a source (a local checkout, a clone URL, a tarball, a folder) into a folder at a known commit;
`file_selection` says which files are read and their text; `chunking` cuts a file under a token budget (the
`sections` chunker) with `token_counts`; `release_chunker` reproduces the released corpus's chunker file by file, with
`release_lexers` (which files are code) and `release_notebooks` (a notebook's script); `pinning` finds the commits
that reproduce a release's corpus ids.
"""
