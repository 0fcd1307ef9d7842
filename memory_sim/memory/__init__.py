"""The NPC memory system over a Worker's bindings (`bindings.worker_env.WorkerEnv`): remember, recall, jobs.

    system.py         MemorySystem, the API; models.py, config.py, rules.py the values it takes and gives
    npcs.py           who an id is (name, role, aliases), for recall's name expansion
    scoring.py        pure scoring, decay and pruning
    ledger/           D1, the source of truth: the schema, every statement, the counts
    writing/          into the vector index and out again: indexing, the outbox, forgetting, correcting, re-deriving
    recalling/        candidates, keyword and hybrid ranking, current state first, presets, recent ones, explanations
    beliefs/          state keys (which piece of state a memory sets), who a memory is about, the opinion story
    consolidation/    condensing a day's topics into summaries: topics and the plan (pure), the summarisers
    jobs/             the scheduled jobs (consolidate, decay and prune, retry), diaries, re-embedding
"""
