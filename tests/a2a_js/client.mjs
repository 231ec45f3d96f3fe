// An A2A client on @a2a-js/sdk (its ClientFactory, which reads the agent card and picks the
// transport), for tests/test_a2a_js_interop.py. Run by Node 22 from .a2a-js/
// (.ci/side-envs .a2a-js):  node client.mjs <scenario> <base url>
// It prints one JSON line per step; "cancel" waits for a line on stdin before it cancels
// (the test sends it once the agent's tool call is running).
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = join(process.env.A2A_JS_HOME, 'node_modules');
const load = (path) => import(pathToFileURL(join(modules, path)).href);
const { Role, TaskState } = await load('@a2a-js/sdk/dist/index.js');
const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } = await load(
  '@a2a-js/sdk/dist/client/index.js'
);

const [scenario, base] = process.argv.slice(2);
const print = (step, value) => console.log(JSON.stringify({ step, ...value }));
const stateName = (state) => Object.keys(TaskState).find((k) => TaskState[k] === state);
const texts = (parts = []) =>
  parts.filter((p) => p.content?.$case === 'text').map((p) => p.content.value);
const data = (parts = []) =>
  parts.filter((p) => p.content?.$case === 'data').map((p) => p.content.value);
const request = (text, task = {}) => ({
  tenant: '',
  metadata: {},
  message: {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, filename: '', mediaType: 'text/plain' }],
    taskId: task.id ?? '',
    contextId: task.contextId ?? '',
    extensions: [],
    metadata: {},
    referenceTaskIds: [],
  },
  configuration: undefined,
});
const taskView = (task) => ({
  kind: 'task',
  id: task.id,
  contextId: task.contextId,
  state: stateName(task.status?.state),
  status: texts(task.status?.message?.parts),
  statusData: data(task.status?.message?.parts),
  artifacts: task.artifacts.map((a) => ({ name: a.name, texts: texts(a.parts) })),
  history: task.history.length,
});
const resultView = (result) =>
  'status' in result ? taskView(result) : { kind: 'message', texts: texts(result.parts) };
const eventView = ({ payload }) => {
  if (payload.$case === 'task') return ['task', stateName(payload.value.status.state)];
  if (payload.$case === 'statusUpdate') {
    const status = payload.value.status;
    return ['status', stateName(status.state), ...texts(status.message?.parts)];
  }
  if (payload.$case === 'artifactUpdate') return ['artifact', ...texts(payload.value.artifact.parts)];
  return ['message', ...texts(payload.value.parts)];
};
const errorView = (err) => ({ error: err.constructor.name, message: err.message });
const attempt = async (call) => {
  try {
    return await call();
  } catch (err) {
    return errorView(err);
  }
};

const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory()],
  })
);
const client = await factory.createFromUrl(base);

if (scenario === 'card') {
  const card = await client.getAgentCard();
  print('card', {
    name: card.name,
    streaming: card.capabilities.streaming,
    pushNotifications: card.capabilities.pushNotifications ?? false,
    interfaces: card.supportedInterfaces.map((i) => [i.protocolBinding, i.protocolVersion]),
    protocolVersion: client.protocolVersion,
  });
} else if (scenario === 'send') {
  const result = await client.sendMessage(request('lookup'));
  print('send', resultView(result));
  const got = await client.getTask({ tenant: '', id: result.id, historyLength: 1 });
  print('get', taskView(got));
} else if (scenario === 'stream') {
  const events = [];
  for await (const event of client.sendMessageStream(request('lookup'))) events.push(eventView(event));
  print('stream', { events });
} else if (scenario === 'cancel') {
  const stream = client.sendMessageStream(request('hang'));
  const first = (await stream.next()).value.payload.value;
  print('started', { id: first.id });
  const lines = createInterface({ input: process.stdin });
  await new Promise((resolve) => lines.once('line', resolve));
  const canceled = await client.cancelTask({ tenant: '', id: first.id, metadata: {} });
  print('cancel', taskView(canceled));
  await stream.return(undefined);
  print('get', taskView(await client.getTask({ tenant: '', id: first.id })));
  lines.close();
} else if (scenario === 'approve') {
  const asked = await client.sendMessage(request('lookup'));
  print('asked', resultView(asked));
  const answered = await client.sendMessage(request('yes', asked));
  print('answered', resultView(answered));
} else if (scenario === 'errors') {
  print('get', await attempt(() => client.getTask({ tenant: '', id: 'no-such-task' })));
  print('cancel', await attempt(() => client.cancelTask({ tenant: '', id: 'no-such-task' })));
  const push = { tenant: '', id: '', taskId: 'no-such-task', url: 'http://127.0.0.1:9/hook' };
  print('push', await attempt(() => client.createTaskPushNotificationConfig(push)));
} else {
  throw new Error(`unknown scenario ${scenario}`);
}
