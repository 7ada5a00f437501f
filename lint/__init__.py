"""Rules over the parsed vault that return findings (code, severity, path, line, message, fix)."""
