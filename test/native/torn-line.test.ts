// Appending to an ATOF file whose last line is torn (an earlier writer was
// cut off mid-line), on native. nemo-relay-node appends straight after the
// fragment, so its first new event and the fragment become one line nobody
// can parse (and the event is lost while counted as written). The adapter
// ends the torn line first, for its own exporters and for the append-mode
// file sinks of a plugins.toml it activates.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { NativeRelay } from '../../native/index.ts';
import { observabilityDocument } from '../support/plugins-toml.ts';
import { available, recordingLogger, relay, tempDir } from './support.ts';

const WHOLE = '{"kind":"mark","name":"whole"}';
const TORN = '{"kind":"mark","na';

/** Each line of `file` parsed, or `BAD` with its text. */
function lines(file: string): (string | { bad: string })[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      try {
        return (JSON.parse(line) as { name: string }).name;
      } catch {
        return { bad: line };
      }
    });
}

function emit(backend: NativeRelay): void {
  const scope = backend.pushScope({ name: 'agent-1', category: 'agent' });
  backend.mark({ name: 'note-1', parent: scope });
  backend.popScope(scope);
}

describe.skipIf(!available)('native: appending after a torn last line', () => {
  let backend: NativeRelay | undefined;
  afterEach(async () => {
    await backend?.shutdown();
    backend = undefined;
  });

  it('an ATOF exporter in append mode ends the torn line first: every new event is its own line, none counted lost', async () => {
    const logger = recordingLogger();
    backend = relay(logger);
    const dir = tempDir('torn');
    const file = path.join(dir, 'events.jsonl');
    fs.writeFileSync(file, `${WHOLE}\n${TORN}`);
    const sink = backend.registerAtofExporter({ outputDirectory: dir, filename: 'events.jsonl', mode: 'append' });
    emit(backend);
    await sink.flush();
    expect(lines(file)).toEqual(['whole', { bad: TORN }, 'agent-1', 'note-1', 'agent-1']);
    expect(backend.outputs()[0]?.dropped).toBeUndefined();
    expect(logger.lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([
      `ATOF file ${file} ended with a torn line (an earlier writer was cut off); it was ended before native appends`,
    ]);
    await sink.close();
  });

  it('a whole last line is left as it is', async () => {
    backend = relay();
    const dir = tempDir('whole');
    const file = path.join(dir, 'events.jsonl');
    fs.writeFileSync(file, `${WHOLE}\n`);
    const sink = backend.registerAtofExporter({ outputDirectory: dir, filename: 'events.jsonl', mode: 'append' });
    emit(backend);
    await sink.close();
    expect(lines(file)).toEqual(['whole', 'agent-1', 'note-1', 'agent-1']);
  });

  it('a plugins.toml file sink in append mode ends the torn line before native opens it', async () => {
    const logger = recordingLogger();
    backend = relay(logger);
    const dir = tempDir('torn-toml');
    const file = path.join(dir, 'events.jsonl');
    fs.writeFileSync(file, `${WHOLE}\n${TORN}`);
    const activation = await backend.initializePluginConfig(
      observabilityDocument({ atof: { enabled: true, sinks: [{ type: 'file', output_directory: dir, filename: 'events.jsonl', mode: 'append' }] } }),
    );
    emit(backend);
    await activation.close();
    expect(lines(file)).toEqual(['whole', { bad: TORN }, 'agent-1', 'note-1', 'agent-1']);
    expect(logger.lines.some((line) => line.level === 'warn' && line.message.includes('ended with a torn line'))).toBe(true);
  });
});
