"""The documentation site's build pieces (mkdocs.yml names them): the command reference, generated from the CLI."""
