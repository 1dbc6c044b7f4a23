// Drives the official TypeScript MCP SDK client for the Go end-to-end tests.
//
//   node client.mjs --name NAME --url URL                        streamable HTTP
//   node client.mjs --name NAME [--env K=V]... -- COMMAND [ARG]... stdio
//
// Reads a JSON plan (an array of steps) from stdin and prints one JSON line
// per step: {"ok":true,"result":...} or {"ok":false,"error":"..."}.
// Steps: {"op":"listTools"}, {"op":"callTool","name":...,"arguments":{...}},
// {"op":"callToolAsTask","name":...,"arguments":{...}},
// {"op":"listResources"}, {"op":"readResource","uri":...},
// {"op":"request","method":...,"params":{...}} (any request, its result as sent),
// {"op":"callToolProgress","name":...,"arguments":{...}} (with a progress
// token; the result carries the progress notifications received as
// _progress), {"op":"notifications"} (the notifications received so far,
// then forgotten), {"op":"sleep","ms":N}, {"op":"sendRootsListChanged"}.
// With --features the client declares sampling, elicitation and roots, and
// answers them: sampling with "sampled: " and the last message's text,
// elicitation by accepting with a value for each requested field, roots/list
// with the --root URIs.
// callToolAsTask calls the tool as a task with the SDK's experimental tasks
// API (tools/call with task params, tasks/get until done, tasks/result)
// and returns the tasks/result result.
//
// The SDK validates structuredContent only for tools it has listed, so, like
// a real host, the client lists tools before its first call if the plan did not.
// Exits 0 after the plan; 2 on bad usage, a bad plan or a failed connection.
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ResultSchema,
} from "@modelcontextprotocol/sdk/types.js";

function fail(message) {
  process.stderr.write(`tsclient: ${message}\n`);
  process.exit(2);
}

let values, positionals;
try {
  ({ values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      name: { type: "string" },
      url: { type: "string" },
      env: { type: "string", multiple: true, default: [] },
      features: { type: "boolean", default: false },
      root: { type: "string", multiple: true, default: [] },
    },
  }));
} catch (err) {
  fail(err.message);
}
const stdio = positionals.length > 0;
if (!values.name || Boolean(values.url) === stdio) {
  fail("usage: client.mjs --name NAME (--url URL | [--env K=V]... -- COMMAND [ARG]...)");
}
const extraEnv = Object.fromEntries(
  values.env.map((kv) => {
    const i = kv.indexOf("=");
    if (i < 1) fail(`--env ${kv}: want KEY=VALUE`);
    return [kv.slice(0, i), kv.slice(i + 1)];
  }),
);

let plan;
try {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  plan = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  if (!Array.isArray(plan)) throw new Error("plan is not a JSON array");
} catch (err) {
  fail(`reading plan: ${err.message}`);
}

const transport = stdio
  ? new StdioClientTransport({
      command: positionals[0],
      args: positionals.slice(1),
      env: { ...process.env, ...extraEnv }, // this process's environment plus --env
      stderr: "inherit",
    })
  : new StreamableHTTPClientTransport(new URL(values.url));
// The server may not suggest a task poll interval: poll briskly rather
// than at the SDK's default of a second.
const capabilities = values.features ? { sampling: {}, elicitation: {}, roots: { listChanged: true } } : {};
const client = new Client({ name: values.name, version: "1.0.0" }, { defaultTaskPollInterval: 50, capabilities });
const received = [];
client.fallbackNotificationHandler = async (n) => {
  received.push(n);
};
if (values.features) {
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    const last = req.params.messages.at(-1);
    const text = last?.content?.type === "text" ? last.content.text : "";
    return { model: "tsclient-model", role: "assistant", content: { type: "text", text: `sampled: ${text}` } };
  });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    const content = {};
    for (const [key, prop] of Object.entries(req.params.requestedSchema?.properties ?? {})) {
      if (prop.enum) content[key] = prop.enum[0];
      else if (prop.oneOf) content[key] = prop.oneOf[0].const;
      else if (prop.type === "boolean") content[key] = true;
      else if (prop.type === "number" || prop.type === "integer") content[key] = prop.minimum ?? 1;
      else if (prop.format === "email") content[key] = "a@example.com";
      else if (prop.format === "date") content[key] = "2026-01-01";
      else if (prop.format === "uri") content[key] = "https://example.com";
      else content[key] = prop.default ?? "x";
    }
    return { action: "accept", content };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({
    roots: values.root.map((uri) => ({ uri, name: uri })),
  }));
}
try {
  await client.connect(transport);
} catch (err) {
  fail(`connecting: ${err.message}`);
}

let listed = false;
const ops = {
  listTools: async () => {
    listed = true;
    return client.listTools();
  },
  callTool: async (step) => {
    if (!listed) await ops.listTools();
    return client.callTool({ name: step.name, arguments: step.arguments ?? {} });
  },
  callToolAsTask: async (step) => {
    if (!listed) await ops.listTools();
    const params = { name: step.name, arguments: step.arguments ?? {} };
    for await (const message of client.experimental.tasks.callToolStream(params, undefined, { task: {} })) {
      if (message.type === "result") return message.result;
      if (message.type === "error") throw message.error;
    }
    throw new Error("task stream ended without a result");
  },
  listResources: () => client.listResources(),
  request: (step) => client.request({ method: step.method, params: step.params ?? {} }, ResultSchema.passthrough()),
  callToolProgress: async (step) => {
    if (!listed) await ops.listTools();
    const progress = [];
    const result = await client.callTool({ name: step.name, arguments: step.arguments ?? {} }, undefined, {
      onprogress: (p) => progress.push(p),
      timeout: 60000,
    });
    return { ...result, _progress: progress };
  },
  notifications: async () => received.splice(0),
  sleep: (step) => new Promise((resolve) => setTimeout(() => resolve({}), step.ms ?? 100)),
  sendRootsListChanged: async () => {
    await client.sendRootsListChanged();
    return {};
  },
  readResource: (step) => client.readResource({ uri: step.uri }),
};

for (const step of plan) {
  let line;
  try {
    const op = ops[step?.op];
    if (!op) throw new Error(`unknown op ${JSON.stringify(step?.op)}`);
    line = { ok: true, result: await op(step) };
  } catch (err) {
    line = { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  process.stdout.write(JSON.stringify(line) + "\n");
}

await client.close().catch(() => {});
// Exit only once stdout is flushed: results can be megabytes.
process.stdout.write("", () => process.exit(0));
