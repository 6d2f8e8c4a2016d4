import { tool, type Tool } from 'ai';
import * as z from 'zod';

/** The weather tool of the AI SDK's docs, as the provider programs these tests run give it to the model. */
export const weather: Tool<{ city: string }, { city: string; forecast: string; tempC: number }> = tool({
  description: 'Get the weather for a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, forecast: 'sunny', tempC: 21 }),
});
