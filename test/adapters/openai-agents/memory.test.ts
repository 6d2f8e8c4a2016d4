// The adapter's bounded memory over 200 failed, abandoned and paused runs
// each, tracing on and off (the 20,000-run version with heap figures is in
// test/slow/).
import { memoryCases } from './memory-cases.ts';
import { TRACING } from './support.ts';

for (const tracing of TRACING) memoryCases(200, 100, false, tracing);
