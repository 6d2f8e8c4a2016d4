// Loads the ATIF builder before each test file. The library loads it when a
// trajectory opens and, if a build comes first, synchronously with
// `require()` (src/backends/atif-builder-loader.ts); Node cannot `require()`
// the `.ts` sources the suite runs in-process, so the suite starts with it
// loaded. The path without it is what users run from `dist/`, covered by
// the child processes of test/plugin/startup.test.ts and
// test/backends/atif-builder-loader.test.ts.
import { loadAtifBuilder } from '../../src/backends/atif-builder-loader.ts';

if ((await loadAtifBuilder()) === undefined) throw new Error('the ATIF builder did not load');
