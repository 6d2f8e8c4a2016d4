// The adapter's bounded memory over 300 failed, abandoned and paused runs
// each (the 20,000-run version with heap figures is in test/slow/).
import { memoryCases } from './memory-cases.ts';

memoryCases(300, 100, false);
