"""leafwise."""
