// conformance-client driver for the official JS SDK client (@a2a-js/sdk).
// Run with NODE_PATH pointing at a node_modules holding @a2a-js/sdk.
// It reports what the library does: a dropped stream is not resubscribed by hand.
const { randomUUID } = require("node:crypto");
const {
  ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory,
  DefaultAgentCardResolver,
} = require("@a2a-js/sdk/client");
const sdk = require("@a2a-js/sdk");

const url = process.env.A2A_CONFORMANCE_URL;
const token = process.env.A2A_CONFORMANCE_TOKEN;
const authFetch = (input, init = {}) => {
  const headers = new Headers(init.headers || {});
  headers.set("Authorization", `Bearer ${token}`);
  return fetch(input, { ...init, headers });
};
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const stateName = (s) => (sdk.TaskState && sdk.TaskState[s] !== undefined ? sdk.TaskState[s] : s);

function message(text, extra = {}) {
  return {
    tenant: "",
    message: {
      messageId: randomUUID(), contextId: extra.contextId || "", taskId: extra.taskId || "",
      role: 1, parts: [{ content: { $case: "text", value: text } }], metadata: undefined,
      extensions: [], referenceTaskIds: [],
    },
    configuration: undefined, metadata: undefined,
  };
}

function eventState(e) {
  const p = e.payload;
  if (!p) return undefined;
  if (p.$case === "task") return stateName(p.value.status.state);
  if (p.$case === "statusUpdate") return stateName(p.value.status.state);
  return undefined;
}

(async () => {
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch }),
                 new RestTransportFactory({ fetchImpl: authFetch })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: authFetch }),
  }));
  const client = await factory.createFromUrl(url);

  const sent = await client.sendMessage(message("complete"));
  out({ scenario: "send", state: sent.status ? stateName(sent.status.state) : "message" });

  const events = [];
  for await (const e of client.sendMessageStream(message("stream"))) events.push(e);
  out({ scenario: "stream", events: events.length, state: eventState(events[events.length - 1]) });

  const first = await client.sendMessage(message("input"));
  const second = await client.sendMessage(message("more", { taskId: first.id, contextId: first.contextId }));
  out({ scenario: "multi-turn", states: [stateName(first.status.state), stateName(second.status.state)] });

  try {
    await client.getTask({ tenant: "", id: "a2a-conformance-unknown-task" });
    out({ scenario: "error", error: null });
  } catch (err) {
    out({ scenario: "error", error: `${err.constructor.name}: ${err.message} ${err.code ?? ""}` });
  }

  let state;
  try {
    for await (const e of client.sendMessageStream(message("drop"))) state = eventState(e) || state;
    out({ scenario: "reconnect", state });
  } catch (err) {
    out({ scenario: "reconnect", state, error: `${err.constructor.name}: ${err.message}` });
  }
})().catch((err) => { console.error(err); process.exit(1); });
