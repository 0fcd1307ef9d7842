// The test Worker under Miniflare's own API, its bindings pointed at `memory-sim serve` by a
// remoteProxyConnectionString each (no plugin, no bridge process). Prints {"url": ...} once ready and runs until
// stdin closes or SIGTERM.
//
//     node miniflare_run.mjs PROJECT_DIR WORKER_SCRIPT INDEX_NAME DATABASE
//
// PROJECT_DIR holds node_modules with miniflare and memory-sim-miniflare; CLOUDFLARE_API_BASE_URL,
// CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID say where the server is.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

const [project, script, index, database] = process.argv.slice(2);
const require = createRequire(join(project, "package.json"));
const { Miniflare } = require("miniflare");
const { agentMemoryWorker, connectionString } = await import(pathToFileURL(require.resolve("memory-sim-miniflare")).href);

const mf = new Miniflare({
  host: "127.0.0.1",
  port: 0,
  workers: [{
    name: "npc-memory",
    modules: true,
    scriptPath: script,
    modulesRoot: dirname(script),  // module names are paths under this root (default: the working directory)
    compatibilityDate: "2025-11-01",
    bindings: { EMBED_MODEL: "sentence-transformers/all-MiniLM-L6-v2" },
    vectorize: { VECTORIZE: { index_name: index, remoteProxyConnectionString: connectionString(`vectorize/${index}`) } },
    ai: { binding: "AI", remoteProxyConnectionString: connectionString("ai") },
    d1Databases: { DB: { id: database, remoteProxyConnectionString: connectionString(`d1/${database}`) } },
    // env.MEMORY: Agent Memory's binding, an RPC service binding to the plugin's Worker
    serviceBindings: { MEMORY: { name: "agent-memory", entrypoint: "AgentMemoryNamespace" } },
  }, agentMemoryWorker("agent-memory", "npc-agent")],
});
const url = await mf.ready;
process.stdout.write(JSON.stringify({ url: url.href }) + "\n");

const stop = async () => {
  await mf.dispose();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.stdin.on("end", stop);
process.stdin.resume();
