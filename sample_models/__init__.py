"""Scripts that build Candor's bundled sample models from real data, offline and deterministically."""
