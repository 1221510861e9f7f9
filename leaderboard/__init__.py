"""The FreshStack leaderboard: submission store (`store`, `schema`), evaluation worker (`worker`, `jobs`) and app.

Nothing is imported here; the library (`freshstack_hf`) never imports this package.
"""
