// Issue 23, item 17: the OpenAI Agents adapter's memory stays flat over
// 20,000 failed, abandoned and paused runs each (see the cases' module).
import { memoryCases } from '../adapters/openai-agents/memory-cases.ts';

memoryCases(20_000, 2_000, true);
