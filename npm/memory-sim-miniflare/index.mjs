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
  if (binding.type === "d1") {
    const database = options.database_id ?? options.database_name ?? fail(`D1 binding ${name} needs database_id or database_name`);
    return { moduleName: "cloudflare-internal:d1-api", inner: [], path: `d1/${encodeURIComponent(database)}` };
  }
  return fail(`binding ${name}: type ${JSON.stringify(binding.type)} is not served (vectorize, ai or d1)`);
}

function serviceName(workerIndex, binding) {
  return `${PLUGIN_NAME}:${workerIndex}:${binding.type}:${binding.name}`;
}

export const plugin = {
  // Miniflare validates only its own plugins' options; this plugin reads the unsafe bindings as given.
  options: { parse: (value) => value },
  async getBindings(bindings, workerIndex) {
    return (bindings ?? []).map((binding) => {
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
      const { path } = describe(binding);
      const { origin, token, account } = settingsOf(binding.options);
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

/** For Miniflare's own API: a binding's remoteProxyConnectionString on `memory-sim serve` (no plugin needed). */
export function connectionString(path, options = {}) {
  const { origin, token, account } = settingsOf(options);
  const url = new URL(`${origin}/remote-proxy/${encodeURIComponent(account)}/${path}`);
  url.searchParams.set("token", token);
  return url;
}
