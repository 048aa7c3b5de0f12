"""accy's command line: ``accy.cli.main.main`` plus one module per command."""
