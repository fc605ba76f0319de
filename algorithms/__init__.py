"""Non-learned algorithms of the seed papers."""
