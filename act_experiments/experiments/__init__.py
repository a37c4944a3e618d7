"""One module per experiment (filled in below)."""
