// For the files that share a process (vitest.config.ts's 'shared' project):
// fails the file that loads nemo-relay-node, since native's state is
// process-wide and would leak into the files after it. Nothing else in the
// shared project loads it, so the first file to load it is the one named,
// whatever order the files ran in. Such a file goes into NATIVE_SHARED in
// test/support/own-process.ts.
import { createRequire } from 'node:module';
import { afterAll } from 'vitest';

const cache = createRequire(import.meta.url).cache;

afterAll(() => {
  const loaded = Object.keys(cache).find((key) => key.includes(`${'/'}nemo-relay-node`));
  if (loaded !== undefined) {
    throw new Error(`this file loaded nemo-relay-node (${loaded}) in a process other files share: add it to NATIVE_SHARED in test/support/own-process.ts`);
  }
});
