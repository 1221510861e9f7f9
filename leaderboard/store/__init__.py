"""The store: everything a board holds, in one database (a SQLite file, or PostgreSQL shared by several machines).

`store.Store` is the board's one handle on it; its tables are `schema`, the plain records it hands out `records`.
"""
