"""The `freshstack-hf` command line: one small module per subcommand.

`main` lists the subcommands and their one-line help (`SUBCOMMANDS`) and builds the parser, importing a
subcommand's module only when it is given; `common` holds what every subcommand shares (topic lists, repo
folders, table cells, JSON output) and `report` the report shape of `evaluate` and `evaluate-answers`. A new
command is a module with `add_arguments(parser)` and `run(args)`, and a line in `SUBCOMMANDS`.
"""
