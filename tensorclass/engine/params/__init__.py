"""params."""
