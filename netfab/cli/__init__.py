"""The `netfab` command line: one module per verb, each a thin layer over its pipeline stage."""
