"""The store: everything a board holds, in one database (a SQLite file, or PostgreSQL shared by several machines).

`store.Store` is the board's one handle on it; its tables are `schema`, the plain records it hands out `records`.
Its rooms: the parts a `Store` is composed of on one `database.Database` (`queue`, `blob_store`, `audit`,
`moderation`, `rate_limit`), whose `dialect` is the one place the code differs by database; what a blob is
(`blobs`, `ranking_blob`); bringing an older store up to date (`migrations`) and opening a store with an older
runs folder (`archive`).

The store knows no kind of system or job by name: `schema` is the registry where the tracks declare theirs and what
the store asks of each (which kinds it accepts, which record a measured efficiency, which are never scored live,
which jobs are side jobs, which blobs a track keeps beside its rankings).
"""
