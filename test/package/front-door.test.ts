// The package's front door: a small root entry (what a plugin user needs),
// one subpath per audience, each runtime name exported once, no deprecated
// aliases, and a plugin object without aliases. Checked on the built dist/,
// which is what a user imports.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { exports: Record<string, { types: string; default: string } | string> };

const entries = Object.entries(manifest.exports).filter((entry): entry is [string, { types: string; default: string }] => typeof entry[1] === 'object');

async function runtimeNames(subpath: string): Promise<string[]> {
  const target = entries.find(([name]) => name === subpath)![1].default;
  return Object.keys(await import(pathToFileURL(path.join(root, target)).href)).sort();
}

/** The names a .d.ts entry exports, values and types (tsc writes them as `export { ... } from` and `export type { ... } from`). */
function declaredNames(subpath: string): string[] {
  const file = path.join(root, entries.find(([name]) => name === subpath)![1].types);
  const text = readFileSync(file, 'utf8');
  const names = new Set<string>();
  for (const match of text.matchAll(/export (?:type )?\{([^}]*)\}/g)) {
    for (const part of match[1]!.split(',')) {
      const name = part.trim().replace(/^type /, '').split(/\s+as\s+/).pop()!.trim();
      if (name !== '') names.add(name);
    }
  }
  expect(text, `${subpath} re-exports a whole module`).not.toMatch(/export \* from/);
  return [...names].sort();
}

describe('the root entry', () => {
  it('holds what a plugin user needs: five functions', async () => {
    expect(await runtimeNames('.')).toEqual(['HookRegistry', 'createHookRecorder', 'createNemoRelayPlugin', 'resolveBackend', 'setLogger']);
  });

  it('declares about thirty names in all, and nothing low-level', () => {
    const names = declaredNames('.');
    expect(names.length).toBeLessThanOrEqual(30);
    for (const internal of ['toJson', 'nowMicros', 'formatTimestamp', 'parseTimestamp', 'detectRuntime', 'atifFilePath', 'safeSessionFragment', 'loadSettings', 'environmentVariables', 'serializeTrajectory', 'createSubtreeFilter', 'adaptLogger', 'PluginHost', 'ExecutionMiddleware']) {
      expect(names, internal).not.toContain(internal);
    }
  });
});

describe('the subpaths', () => {
  it('export each runtime name once (HookRegistry is also at the root, for the common import)', async () => {
    const owners = new Map<string, string[]>();
    for (const [subpath] of entries) {
      // The adapters import their framework (an optional peer); they are checked by consumer.test.ts.
      if (['./ai-sdk', './openai-agents', './langchain', './claude-agent-sdk'].includes(subpath)) continue;
      for (const name of await runtimeNames(subpath)) owners.set(name, [...(owners.get(name) ?? []), subpath]);
    }
    const twice = [...owners].filter(([, where]) => where.length > 1);
    expect(twice).toEqual([['HookRegistry', ['.', './hooks']]]);
  });

  it('give formats, the backend contract and the fake their own entries', async () => {
    expect(await runtimeNames('./formats')).toEqual(
      ['ATIF_SCHEMA_VERSION', 'ATIF_SCHEMA_VERSIONS', 'ATIF_STEP_FIELDS', 'ATOF_VERSION', 'AtifBuilder', 'SCOPE_CATEGORIES', 'isScopeCategory', 'parseAtofJsonl', 'validateAtif', 'validateAtofEvents', 'validatePluginConfig'].sort(),
    );
    expect(await runtimeNames('./backend')).toEqual(['AtofExporterError', 'InvalidPluginConfigError', 'PluginActivationBusyError', 'RelayError']);
    expect(await runtimeNames('./testing')).toEqual(['createFakeRelay']);
  });
});

describe('no deprecated aliases in a 0.x release', () => {
  it('has no @deprecated export left in src/ or native/', () => {
    const found: string[] = [];
    const walk = (folder: string): void => {
      for (const name of readdirSync(folder)) {
        const file = path.join(folder, name);
        if (statSync(file).isDirectory()) walk(file);
        else if (file.endsWith('.ts') && readFileSync(file, 'utf8').includes('@deprecated')) found.push(path.relative(root, file));
      }
    };
    walk(path.join(root, 'src'));
    walk(path.join(root, 'native'));
    expect(found).toEqual([]);
  });
});

describe('the plugin object', () => {
  it('has one name per job: no onXxx aliases of handlers, no forceFlush', async () => {
    const { createNemoRelayPlugin } = (await import(pathToFileURL(path.join(root, 'dist/src/index.js')).href)) as typeof import('../../src/index.ts');
    const plugin = createNemoRelayPlugin({ backend: 'off', env: {} });
    expect(Object.keys(plugin).sort()).toEqual(['flush', 'handlers', 'installExitHandlers', 'llmExecution', 'ready', 'register', 'shutdown', 'status', 'toolExecution']);
    expect(typeof plugin[Symbol.asyncDispose]).toBe('function');
    expect(Object.keys(plugin.handlers)).toHaveLength(15);
    await plugin.shutdown();
  });
});
