// Issue 23, item 17: the OpenAI Agents adapter's memory stays flat over
// 20,000 failed, abandoned and paused runs each, tracing on and off (see the
// cases' module).
import { memoryCases } from '../adapters/openai-agents/memory-cases.ts';
import { TRACING } from '../adapters/openai-agents/support.ts';

for (const tracing of TRACING) memoryCases(20_000, 2_000, true, tracing);
