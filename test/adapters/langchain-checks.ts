// What the LangChain provider tests share: the docs' weather tool, the handler in a run's config, and the token and
// call readings a trajectory is held to (the program's messages against the recorded steps and API calls).
import { tool } from '@langchain/core/tools';
import type { AIMessage, BaseMessage } from '@langchain/core/messages';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import type { AtifDoc, Recorded } from './support.ts';

/** The tool LangChain's docs give an agent. */
export const getWeather = tool(async ({ city }) => `It is sunny in ${city}.`, {
  name: 'get_weather',
  description: 'Get the weather for a city',
  schema: z.object({ city: z.string() }),
});

type Usage = { input_tokens: number; output_tokens: number; total_tokens: number };

/** The trajectory's agent steps. */
export const agentSteps = (doc: AtifDoc): AtifDoc[] => (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');

/** The AI messages' usage_metadata: [input, output, total]. */
export const reported = (messages: BaseMessage[]): number[][] =>
  messages
    .map((m) => (m as AIMessage).usage_metadata as Usage | undefined)
    .filter((usage) => usage !== undefined)
    .map((u) => [u.input_tokens, u.output_tokens, u.total_tokens]);

/** Each agent step's [prompt, completion, total] tokens. */
export const recordedCounts = (doc: AtifDoc): number[][] => agentSteps(doc).map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.extra?.total_tokens]);

/** The recorded API calls' ends. */
export const posts = (recorded: Recorded) => recorded.log.filter((e) => e.hook === 'post_api_request').map((e) => e.payload as Record<string, any>);

/** A run's config with the handler on the recorded hooks. */
export const handler = (recorded: Recorded) => ({ callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
