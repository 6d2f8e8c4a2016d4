// An MCP server that asks its client for more than a tool's arguments, and
// the agent that answers it, written as the MCP SDK's docs and examples write
// them (toolWithSampleServer, elicitationFormExample, simpleStreamableHttp's
// client): the server's `plan_trip` tool sends progress, asks the client to
// sample (`server.server.createMessage`), then elicits a yes or no
// (`server.server.elicitInput`); it also serves a resource and a prompt. The
// agent is the AI SDK agent of docs/adapters/mcp.md with the client's
// `sampling/createMessage` handler calling a real model client (the AI SDK,
// against the loopback provider) and its `elicitation/create` handler
// answering as TRIP_ANSWER says (accept, decline, cancel); and the page's
// AI SDK MCP client agent (`createMCPClient`, `instrumentMcpTransport`), which
// cannot sample and answers elicitations with `onElicitationRequest`. Both
// sides are instrumented as that page says. Used by sampling.test.ts.

export const TRIP_SERVER = String.raw`// trip-server.mjs
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { createNemoRelayPlugin, HookRegistry } from 'nemo-relay-hooks';
import { instrumentMcpServer } from 'nemo-relay-hooks/mcp';

const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin({ settings: { atifEnabled: true, atifOutputDirectory: 'trajectories', atofFilename: 'server-atof.jsonl' } });
plugin.register(hooks);

const server = new McpServer({ name: 'trip-server', version: '1.0.0' });
server.registerTool('plan_trip', { description: 'Plans a day in a city', inputSchema: { city: z.string() } }, async ({ city }, extra) => {
  const progressToken = extra._meta?.progressToken;
  const progress = (step, message) =>
    progressToken === undefined ? undefined : extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: step, total: 3, message } });
  await progress(1, 'asking the model');
  // A client that cannot sample (the AI SDK's MCP client) gets the harbour.
  let sight = 'the harbour';
  if (server.server.getClientCapabilities()?.sampling) {
    const sampled = await server.server.createMessage({
      messages: [{ role: 'user', content: { type: 'text', text: 'Name one sight in ' + city + '.' } }],
      maxTokens: 100,
    });
    if (sampled.content.type === 'text') sight = sampled.content.text;
  }
  await progress(2, 'asking the user');
  const answer = await server.server.elicitInput({
    mode: 'form',
    message: 'Book a guided tour of ' + sight + '?',
    requestedSchema: { type: 'object', properties: { book: { type: 'boolean', title: 'Book it' } }, required: ['book'] },
  });
  await progress(3, 'done');
  const booked = answer.action === 'accept' && answer.content?.book === true;
  return { content: [{ type: 'text', text: sight + (booked ? ' (tour booked)' : ' (no tour: ' + answer.action + ')') }] };
});
server.registerResource('guide', 'guide://oslo', { mimeType: 'text/plain' }, async (uri) => ({ contents: [{ uri: uri.href, text: 'Oslo: fjords, museums, parks.' }] }));
server.registerPrompt('trip', { argsSchema: { city: z.string() } }, ({ city }) => ({
  messages: [{ role: 'user', content: { type: 'text', text: 'Plan a day in ' + city + '.' } }],
}));
instrumentMcpServer(server, hooks);

await server.connect(new StdioServerTransport());
process.stdin.on('close', () => plugin.shutdown().then(() => process.exit(0)));
plugin.installExitHandlers();
`;

export const TRIP_AGENT = String.raw`// trip-agent.mjs
import { fileURLToPath } from 'node:url';
import { openai } from '@ai-sdk/openai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { createNemoRelayPlugin, HookRegistry } from 'nemo-relay-hooks';
import { instrumentAiSdk } from 'nemo-relay-hooks/ai-sdk';
import { instrumentMcpClient } from 'nemo-relay-hooks/mcp';

const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin({ settings: { atifEnabled: true, atifOutputDirectory: 'trajectories', atofFilename: 'agent-atof.jsonl' } });
plugin.register(hooks);
const uninstall = instrumentAiSdk(hooks, { sessionId: 'user-42' });

const client = new Client({ name: 'trip-agent', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {} } } });
// The server asks for a completion: this program's model answers it.
client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  console.log('sampling: ' + JSON.stringify(request.params));
  const { text } = await generateText({
    model: openai('gpt-4o-mini'),
    messages: request.params.messages.map((message) => ({ role: message.role, content: message.content.type === 'text' ? message.content.text : '' })),
    maxOutputTokens: request.params.maxTokens,
  });
  return { role: 'assistant', content: { type: 'text', text }, model: 'gpt-4o-mini', stopReason: 'endTurn' };
});
// The server asks the user: here the answer is the one the run was given.
const answer = process.env.TRIP_ANSWER ?? 'accept';
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  console.log('elicitation: ' + JSON.stringify(request.params) + ' -> ' + answer);
  return answer === 'accept' ? { action: 'accept', content: { book: true } } : { action: answer };
});
const mcp = instrumentMcpClient(client, hooks);
const server = fileURLToPath(new URL('./trip-server.mjs', import.meta.url));
await mcp.connect(new StdioClientTransport({ command: process.execPath, args: process.versions.deno ? ['run', '-A', server] : [server], env: process.env }));

const progress = [];
const { text } = await generateText({
  model: openai('gpt-4o'),
  prompt: 'Plan a day in Oslo.',
  tools: {
    plan_trip: tool({
      description: 'Plans a day in a city',
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) =>
        (await mcp.callTool({ name: 'plan_trip', arguments: { city } }, undefined, { onprogress: (update) => progress.push(update.message) })).content,
    }),
  },
  stopWhen: stepCountIs(3),
});
console.log(text);
console.log('progress: ' + progress.join(' | '));

const guide = await mcp.readResource({ uri: 'guide://oslo' });
console.log('resource: ' + guide.contents[0].text);
const prompt = await mcp.getPrompt({ name: 'trip', arguments: { city: 'Oslo' } });
console.log('prompt: ' + prompt.messages[0].content.text);

await mcp.close();
uninstall();
await plugin.shutdown(); // trajectories/ holds both sessions' files
`;

export const AI_SDK_TRIP_AGENT = String.raw`// ai-sdk-trip-agent.mjs
import { fileURLToPath } from 'node:url';
import { createMCPClient, ElicitationRequestSchema } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { openai } from '@ai-sdk/openai';
import { generateText, stepCountIs } from 'ai';
import { createNemoRelayPlugin, HookRegistry } from 'nemo-relay-hooks';
import { instrumentAiSdk } from 'nemo-relay-hooks/ai-sdk';
import { instrumentMcpTransport } from 'nemo-relay-hooks/mcp';

const hooks = new HookRegistry();
const plugin = createNemoRelayPlugin({ settings: { atifEnabled: true, atifOutputDirectory: 'trajectories', atofFilename: 'agent-atof.jsonl' } });
plugin.register(hooks);
const uninstall = instrumentAiSdk(hooks, { sessionId: 'user-42' });

const server = fileURLToPath(new URL('./trip-server.mjs', import.meta.url));
const transport = new Experimental_StdioMCPTransport({ command: process.execPath, args: process.versions.deno ? ['run', '-A', server] : [server], env: process.env });
const mcp = await createMCPClient({ transport: instrumentMcpTransport(transport, hooks), capabilities: { elicitation: {} } });
const answer = process.env.TRIP_ANSWER ?? 'accept';
mcp.onElicitationRequest(ElicitationRequestSchema, async (request) => {
  console.log('elicitation: ' + JSON.stringify(request.params) + ' -> ' + answer);
  return answer === 'accept' ? { action: 'accept', content: { book: true } } : { action: answer };
});

const { text } = await generateText({
  model: openai('gpt-4o'),
  prompt: 'Plan a day in Oslo.',
  tools: await mcp.tools(),
  stopWhen: stepCountIs(3),
});
console.log(text);

await mcp.close();
uninstall();
await plugin.shutdown();
`;
