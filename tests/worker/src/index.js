// The design's Worker: indexMemory, recall and embed over env.AI, env.VECTORIZE and env.DB, exactly as they run on
// Cloudflare; below them, a small router the test suite drives (one route per binding method tried).

const DEFAULT_MODEL = "@cf/baai/bge-base-en-v1.5";

export async function embed(env, texts) {
  const model = env.EMBED_MODEL || DEFAULT_MODEL;
  const answer = await env.AI.run(model, { text: texts, pooling: "cls" });
  return answer.data;
}

export async function indexMemory(env, memory) {
  const [values] = await embed(env, [memory.content]);
  return env.VECTORIZE.upsert([{
    id: memory.id,
    values,
    metadata: {
      npcId: memory.npcId, type: memory.type ?? "observation", day: memory.day, importance: memory.importance,
      decayFactor: 0, textPreview: memory.content.slice(0, 200),
    },
  }]);
}

export async function recall(env, npcId, query, k = 5) {
  const [vector] = await embed(env, [query]);
  const found = await env.VECTORIZE.query(vector, { topK: k, filter: { npcId }, returnMetadata: "all" });
  return found.matches.map((m) => ({
    id: m.id, score: m.score, text: m.metadata.textPreview, importance: m.metadata.importance, day: m.metadata.day,
  }));
}

function statement(env, body) {
  return env.DB.prepare(body.sql).bind(...(body.params ?? []));
}

// Agent Memory through env.MEMORY, as a Worker uses Cloudflare's `agent_memory` binding. rememberAndAnswer is
// docs/agent-memory.md's example, verbatim (tests/docs/test_agent_memory_doc.py checks it).
export async function rememberAndAnswer(env, userId, messages, question) {
  const profile = await env.MEMORY.getProfile(userId);
  await profile.ingest(messages, { sessionId: "chat-1" });
  const { answer } = await profile.recall(question, { responseLength: "short" });
  const { memories } = await profile.list({ type: "task" });
  for (const task of memories) await profile.delete(task.id);
  return answer;
}

const profileOf = (env, b) => env.MEMORY.getProfile(b.profile);

const ROUTES = {
  "/memory/example": async (env, b) => rememberAndAnswer(env, b.profile, b.messages, b.question),
  "/memory/ingest": async (env, b) => (await profileOf(env, b)).ingest(b.messages, { sessionId: b.sessionId }),
  "/memory/recall": async (env, b) => (await profileOf(env, b)).recall(b.query, b.options ?? {}),
  "/memory/list": async (env, b) => (await profileOf(env, b)).list(b.options ?? {}),
  "/memory/get": async (env, b) => (await profileOf(env, b)).get(b.id),
  "/memory/deleteTasks": async (env, b) => {
    const profile = await profileOf(env, b);
    const { memories } = await profile.list({ type: "task" });
    return Promise.all(memories.map((m) => profile.delete(m.id)));
  },
  "/memory/deleteSession": async (env, b) => (await profileOf(env, b)).deleteSession(b.sessionId),
  "/memory/summary": async (env, b) => (await profileOf(env, b)).getSummary(b.options ?? {}),
  "/remember": async (env, b) => indexMemory(env, b),
  "/recall": async (env, b) => recall(env, b.npcId, b.query, b.k),
  "/embed": async (env, b) => ({ dimensions: (await embed(env, b.texts))[0].length, count: b.texts.length }),
  "/ai/run": async (env, b) => env.AI.run(b.model, b.inputs),
  "/vectorize/describe": async (env) => env.VECTORIZE.describe(),
  "/vectorize/insert": async (env, b) => env.VECTORIZE.insert(b.vectors),
  "/vectorize/query": async (env, b) => env.VECTORIZE.query(b.vector, b.options),
  "/vectorize/queryById": async (env, b) => env.VECTORIZE.queryById(b.id, b.options),
  "/vectorize/getByIds": async (env, b) => env.VECTORIZE.getByIds(b.ids),
  "/vectorize/deleteByIds": async (env, b) => env.VECTORIZE.deleteByIds(b.ids),
  "/d1/all": async (env, b) => statement(env, b).all(),
  "/d1/first": async (env, b) => statement(env, b).first(b.column),
  "/d1/raw": async (env, b) => statement(env, b).raw({ columnNames: true }),
  "/d1/run": async (env, b) => statement(env, b).run(),
  "/d1/batch": async (env, b) => env.DB.batch(b.statements.map((s) => statement(env, s))),
  "/d1/exec": async (env, b) => env.DB.exec(b.sql),
  "/d1/session": async (env, b) => {
    const session = env.DB.withSession(b.constraint ?? "first-unconstrained");
    const result = await session.prepare(b.sql).run();
    return { bookmark: session.getBookmark(), changes: result.meta.changes };
  },
};

export default {
  async fetch(request, env) {
    const route = ROUTES[new URL(request.url).pathname];
    if (!route) return Response.json({ error: "no such route" }, { status: 404 });
    try {
      const body = request.method === "POST" ? await request.json() : {};
      return Response.json({ result: (await route(env, body)) ?? null });
    } catch (error) {
      return Response.json({ error: String(error.message ?? error) }, { status: 500 });
    }
  },
};
