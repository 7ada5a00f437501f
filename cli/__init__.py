"""The `alaya` command line: thin click commands over vault_engine, compilers and lint."""
