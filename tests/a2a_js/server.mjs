// An A2A agent on @a2a-js/sdk (the JavaScript SDK's own DefaultRequestHandler, task store and
// express JSON-RPC handler), for tests/test_a2a_js_interop.py. Run by Node 22 from
// .a2a-js/ (.ci/side-envs .a2a-js); listens on 127.0.0.1 at a free port and prints
// "listening <base url>" once it accepts connections.
//
// What it answers depends on the user's text:
//   "message <x>"  a Message (no task) saying "echo: <x>"
//   "task <x>"     a Task: submitted, working, the artifact "answer" ("done: <x>"), completed
//   "ask <x>"      a Task in input-required ("Which city?"); the next message on that task
//                  completes it with "got: <its text>"
//   "fail <x>"     a Task that fails with "could not: <x>"
//   "hang"         a Task working until tasks/cancel cancels it
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = join(process.env.A2A_JS_HOME, 'node_modules');
const load = (path) => import(pathToFileURL(join(modules, path)).href);
const { Role, TaskState, A2A_PROTOCOL_VERSION } = await load('@a2a-js/sdk/dist/index.js');
const { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } = await load(
  '@a2a-js/sdk/dist/server/index.js'
);
const { agentCardHandler, jsonRpcHandler, UserBuilder } = await load(
  '@a2a-js/sdk/dist/server/express/index.js'
);
const express = (await load('express/index.js')).default;

const text = (value) => ({ content: { $case: 'text', value }, filename: '', mediaType: 'text/plain' });
const message = (taskId, contextId, value) => ({
  role: Role.ROLE_AGENT,
  messageId: randomUUID(),
  parts: [text(value)],
  taskId,
  contextId,
  extensions: [],
  metadata: {},
  referenceTaskIds: [],
});
const userText = (msg) =>
  msg.parts.filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('\n');

class Executor {
  constructor() {
    this.cancelled = new Map(); // task id -> resolve of its hang
  }

  status(bus, taskId, contextId, state, words) {
    const status = { state, timestamp: new Date().toISOString() };
    if (words) status.message = message(taskId, contextId, words);
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status, metadata: {} }));
  }

  async execute(request, bus) {
    const { taskId, contextId } = request;
    const said = userText(request.userMessage);
    const [verb, ...rest] = said.split(' ');
    const arg = rest.join(' ');
    if (verb === 'message' && !request.task) {
      bus.publish(AgentEvent.message(message('', contextId, `echo: ${arg}`)));
      bus.finished();
      return;
    }
    const task = request.task ?? {
      id: taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: new Date().toISOString() },
      artifacts: [],
      history: [request.userMessage],
      metadata: {},
    };
    bus.publish(AgentEvent.task(task));
    if (request.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
      this.answer(bus, taskId, contextId, `got: ${said}`);
    } else if (verb === 'task') {
      this.status(bus, taskId, contextId, TaskState.TASK_STATE_WORKING, 'working on it');
      this.answer(bus, taskId, contextId, `done: ${arg}`);
    } else if (verb === 'ask') {
      this.status(bus, taskId, contextId, TaskState.TASK_STATE_INPUT_REQUIRED, 'Which city?');
    } else if (verb === 'fail') {
      this.status(bus, taskId, contextId, TaskState.TASK_STATE_FAILED, `could not: ${arg}`);
    } else if (verb === 'hang') {
      this.status(bus, taskId, contextId, TaskState.TASK_STATE_WORKING, 'hanging');
      await new Promise((resolve) => this.cancelled.set(taskId, resolve));
      this.status(bus, taskId, contextId, TaskState.TASK_STATE_CANCELED, 'canceled');
    } else {
      this.status(bus, taskId, contextId, TaskState.TASK_STATE_REJECTED, `unknown: ${said}`);
    }
    bus.finished();
  }

  answer(bus, taskId, contextId, words) {
    const artifact = { artifactId: randomUUID(), name: 'answer', parts: [text(words)] };
    bus.publish(
      AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: false, lastChunk: true })
    );
    this.status(bus, taskId, contextId, TaskState.TASK_STATE_COMPLETED);
  }

  cancelTask = async (taskId) => {
    this.cancelled.get(taskId)?.();
    this.cancelled.delete(taskId);
  };
}

const card = {
  name: 'js-peer',
  description: 'An agent on @a2a-js/sdk',
  supportedInterfaces: [],
  version: '1.0.0',
  capabilities: { streaming: process.env.A2A_JS_STREAMING !== 'false', pushNotifications: false },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    { id: 'echo', name: 'Echo', description: 'Answers as told', tags: ['test'] },
  ],
};
const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new Executor());
const app = express();
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
app.use(jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
const server = app.listen(0, '127.0.0.1', () => {
  const base = `http://127.0.0.1:${server.address().port}`;
  card.supportedInterfaces.push({
    url: `${base}/`,
    protocolBinding: 'JSONRPC',
    protocolVersion: A2A_PROTOCOL_VERSION,
  });
  console.log(`listening ${base}`);
});
process.stdin.on('end', () => process.exit(0)); // the test closes stdin to stop it
process.stdin.resume();
