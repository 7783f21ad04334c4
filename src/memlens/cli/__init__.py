"""Command-line interface: argument parsing only; work is handed to the packages."""
