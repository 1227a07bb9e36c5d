"""The typer app: thin. Parses options, calls the layers, maps VgprscopeError to exit codes."""
