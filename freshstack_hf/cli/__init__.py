"""The `freshstack-hf` command line: one small module per subcommand."""
