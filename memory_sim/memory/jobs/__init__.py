"""The scheduled jobs: consolidation, diaries, decay and pruning, retrying and re-embedding the index."""
