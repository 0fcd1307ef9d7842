// memory-sim-miniflare: a Miniflare external plugin named "memory-sim" that serves a Worker's `vectorize`, `ai`
// and `d1` bindings from a local `memory-sim serve`.
//
// workerd's own binding modules (cloudflare-internal:vectorize-api, ai-api, d1-api) stay in place, so limits,
// validation and error wording are production's; each is handed a fetcher: a small Worker that forwards the
// module's request to the server's remote-proxy endpoint (/remote-proxy/{account}/..., Miniflare's remote-proxy
// protocol: MF-URL, MF-Binding, MF-Header-*) on loopback.
//
// Configuration: CLOUDFLARE_API_BASE_URL, CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID, as wrangler's
// management verbs read them; a binding's `options` may override them with `upstream` ("127.0.0.1:8787" or a
// URL), `token` and `account`. Vectorize takes `index_name`; D1 `database_id` or `database_name`.
//
// Nothing here imports miniflare or workerd: the plugin is loaded by the Worker project's own miniflare, from
// wherever npm put this folder (linked or copied), and plugins are plain objects.

const PLUGIN_NAME = "memory-sim";

const FORWARDER = `
export default {
  async fetch(request, env) {
    const headers = new Headers({ authorization: "Bearer " + env.token, "MF-URL": request.url, "MF-Binding": env.binding });
    for (const [name, value] of request.headers) headers.set("MF-Header-" + name, value);
    return fetch(env.target, { method: request.method, headers, body: request.body });
  },
};
`;

// A Worker's `env.MEMORY` (Cloudflare's `agent_memory` binding, which wrangler 4.50 does not know): an RPC service
// binding to this Worker's `AgentMemoryNamespace` entrypoint, whose methods are the binding's (getProfile,
// deleteProfile; a profile's ingest, remember, recall, list, get, delete, deleteSession, getSummary), each one
// request to the server's Agent Memory REST API (/client/v4/accounts/{account}/agent-memory/namespaces/{ns}/...).
// REST makes a profile on its first write; a read of a profile never written to answers as an empty profile
// does, as the binding's getProfile (which creates it) would. Errors are thrown with the API's message.
export const AGENT_MEMORY_WORKER = `
import { RpcTarget, WorkerEntrypoint } from "cloudflare:workers";

const NO_PROFILE = 10030;

class AgentMemoryError extends Error {
  constructor(message, code, status) {
    super(message);
    this.name = "AgentMemoryError";
    this.code = code;
    this.status = status;
  }
}

async function call(env, method, path, body, params) {
  const url = new URL(env.base + path);
  for (const [key, value] of Object.entries(params ?? {})) {
    if (value !== undefined && value !== null) url.searchParams.set(key, String(value));
  }
  const init = { method, headers: { authorization: "Bearer " + env.token, "content-type": "application/json" } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(url, init);
  const answer = await response.json().catch(() => null);
  if (!response.ok || !answer || answer.success === false) {
    const first = (answer && answer.errors && answer.errors[0]) || {};
    throw new AgentMemoryError(first.message || "HTTP " + response.status, first.code, response.status);
  }
  return answer;
}

async function orEmpty(read, empty) {
  try {
    return await read();
  } catch (error) {
    if (error.code === NO_PROFILE) return empty;
    throw error;
  }
}

const iso = (value) => (value instanceof Date ? value.toISOString() : value);

function memory(wire) {
  const made = { id: wire.id, type: wire.type, summary: wire.summary, sessionId: wire.sessionId ?? null,
                 createdAt: new Date(wire.createdAt), updatedAt: new Date(wire.updatedAt) };
  if (wire.content !== undefined) made.content = wire.content;
  return made;
}

class AgentMemoryProfile extends RpcTarget {
  constructor(env, path) {
    super();
    this.env = env;
    this.path = path;
  }
  async ingest(messages, options = {}) {
    const wire = Array.from(messages, (m) => ({ ...m, timestamp: iso(m.timestamp) }));
    await call(this.env, "POST", this.path + "/ingest", { messages: wire, sessionId: options.sessionId ?? undefined });
  }
  async remember(given) {
    const answer = await call(this.env, "POST", this.path + "/remember", { content: given.content, sessionId: given.sessionId ?? undefined });
    return memory(answer.result);
  }
  async recall(query, options = {}) {
    const body = { query, ...options, referenceDate: iso(options.referenceDate) };
    return orEmpty(async () => (await call(this.env, "POST", this.path + "/recall", body)).result,
                   { count: 0, answer: "", candidates: [] });
  }
  async list(options = {}) {
    const params = { per_page: options.limit, cursor: options.cursor, session_id: options.sessionId, type: options.type };
    return orEmpty(async () => {
      const answer = await call(this.env, "GET", this.path + "/memories", undefined, params);
      const page = { memories: answer.result.map(memory) };
      if (answer.result_info && answer.result_info.cursor) page.cursor = answer.result_info.cursor;
      return page;
    }, { memories: [] });
  }
  async get(memoryId) {
    return memory((await call(this.env, "GET", this.path + "/memories/" + encodeURIComponent(memoryId))).result);
  }
  async delete(memoryId) {
    return memory((await call(this.env, "DELETE", this.path + "/memories/" + encodeURIComponent(memoryId))).result);
  }
  async deleteSession(sessionId) {
    await orEmpty(() => call(this.env, "DELETE", this.path + "/sessions/" + encodeURIComponent(sessionId)), null);
  }
  async getSummary(options = {}) {
    return orEmpty(async () => (await call(this.env, "POST", this.path + "/summary", { sessionId: options.sessionId ?? undefined })).result,
                   { summary: "" });
  }
}

export class AgentMemoryNamespace extends WorkerEntrypoint {
  getProfile(name) {
    return new AgentMemoryProfile(this.env, "/profiles/" + encodeURIComponent(name));
  }
  async deleteProfile(name) {
    await orEmpty(() => call(this.env, "DELETE", "/profiles/" + encodeURIComponent(name)), null);
  }
}

export default {
  fetch() {
    return new Response("an Agent Memory binding: call it through env.MEMORY", { status: 404 });
  },
};
`;

function fail(message) {
  throw new Error(`memory-sim-miniflare: ${message}`);
}

/** The server's origin, token and account of one binding: its options first, then the environment. */
export function settingsOf(options = {}, environ = process.env) {
  const upstream = options.upstream ?? environ.CLOUDFLARE_API_BASE_URL;
  if (!upstream) fail("set CLOUDFLARE_API_BASE_URL (e.g. http://127.0.0.1:8787/client/v4) or the binding's options.upstream");
  const origin = new URL(/^[a-z]+:\/\//i.test(upstream) ? upstream : `http://${upstream}`).origin;
  const token = options.token ?? environ.CLOUDFLARE_API_TOKEN;
  if (!token) fail("set CLOUDFLARE_API_TOKEN (a token of `memory-sim serve`) or the binding's options.token");
  const account = options.account ?? environ.CLOUDFLARE_ACCOUNT_ID;
  if (!account) fail("set CLOUDFLARE_ACCOUNT_ID (e.g. local: the data folder's own account) or options.account");
  return { origin, token, account };
}

/** What one binding is: its workerd module, the module's own inner bindings, the server path it reaches. */
export function describe(binding) {
  const options = binding.options ?? {};
  const name = binding.name;
  if (binding.type === "vectorize") {
    const index = options.index_name ?? fail(`Vectorize binding ${name} needs index_name`);
    return {
      moduleName: "cloudflare-internal:vectorize-api",
      inner: [{ name: "indexId", text: index }, { name: "indexVersion", text: "v2" }, { name: "useNdJson", json: "true" }],
      path: `vectorize/${encodeURIComponent(index)}`,
    };
  }
  if (binding.type === "ai") {
    return { moduleName: "cloudflare-internal:ai-api", inner: [], path: "ai" };
  }
  if (binding.type === "agent_memory") {
    const namespace = options.namespace ?? binding.namespace ?? fail(`Agent Memory binding ${name} needs namespace`);
    return { service: true, path: `agent-memory/namespaces/${encodeURIComponent(namespace)}` };
  }
  if (binding.type === "d1") {
    const database = options.database_id ?? options.database_name ?? fail(`D1 binding ${name} needs database_id or database_name`);
    return { moduleName: "cloudflare-internal:d1-api", inner: [], path: `d1/${encodeURIComponent(database)}` };
  }
  return fail(`binding ${name}: type ${JSON.stringify(binding.type)} is not served (vectorize, ai, d1 or agent_memory)`);
}

function serviceName(workerIndex, binding) {
  return `${PLUGIN_NAME}:${workerIndex}:${binding.type}:${binding.name}`;
}

export const plugin = {
  // Miniflare validates only its own plugins' options; this plugin reads the unsafe bindings as given.
  options: { parse: (value) => value },
  async getBindings(bindings, workerIndex) {
    return (bindings ?? []).map((binding) => {
      if (binding.type === "agent_memory") {  // an RPC service binding to the entrypoint above
        describe(binding);
        return { name: binding.name, service: { name: serviceName(workerIndex, binding), entrypoint: "AgentMemoryNamespace" } };
      }
      const { moduleName, inner } = describe(binding);
      const fetcher = { name: "fetcher", service: { name: serviceName(workerIndex, binding) } };
      return { name: binding.name, wrapped: { moduleName, innerBindings: [fetcher, ...inner] } };
    });
  },
  getNodeBindings() {
    return {}; // reached from the Worker only (not through getPlatformProxy)
  },
  async getServices({ options, workerIndex }) {
    return (options ?? []).map((binding) => {
      const { path, service } = describe(binding);
      const { origin, token, account } = settingsOf(binding.options);
      if (service) {
        return { name: serviceName(workerIndex, binding), worker: agentMemoryWorkerConfig(origin, token, account, path) };
      }
      const target = `${origin}/remote-proxy/${encodeURIComponent(account)}/${path}`;
      return {
        name: serviceName(workerIndex, binding),
        worker: {
          compatibilityDate: "2025-01-01",
          modules: [{ name: "forwarder.mjs", esModule: FORWARDER }],
          bindings: [
            { name: "target", text: target },
            { name: "token", text: token },
            { name: "binding", text: binding.name },
          ],
        },
      };
    });
  },
};

export const plugins = { [PLUGIN_NAME]: plugin };

function agentMemoryWorkerConfig(origin, token, account, path) {
  return {
    compatibilityDate: "2025-01-01",
    modules: [{ name: "agent-memory.mjs", esModule: AGENT_MEMORY_WORKER }],
    bindings: [
      { name: "base", text: `${origin}/client/v4/accounts/${encodeURIComponent(account)}/${path}` },
      { name: "token", text: token },
    ],
  };
}

/** For Miniflare's own API: the Worker serving an `env.MEMORY` of `namespace` (add it to `workers`, and bind
 * it with `serviceBindings: { MEMORY: { name, entrypoint: "AgentMemoryNamespace" } }`). */
export function agentMemoryWorker(name, namespace, options = {}) {
  const { origin, token, account } = settingsOf(options);
  return {
    name,
    modules: [{ type: "ESModule", path: "agent-memory.mjs", contents: AGENT_MEMORY_WORKER }],
    compatibilityDate: "2025-01-01",
    bindings: {
      base: `${origin}/client/v4/accounts/${encodeURIComponent(account)}/agent-memory/namespaces/${encodeURIComponent(namespace)}`,
      token,
    },
  };
}

/** For Miniflare's own API: a binding's remoteProxyConnectionString on `memory-sim serve` (no plugin needed). */
export function connectionString(path, options = {}) {
  const { origin, token, account } = settingsOf(options);
  const url = new URL(`${origin}/remote-proxy/${encodeURIComponent(account)}/${path}`);
  url.searchParams.set("token", token);
  return url;
}
