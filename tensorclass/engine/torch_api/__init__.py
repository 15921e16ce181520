"""torch_api."""
