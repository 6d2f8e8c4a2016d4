// The OpenTelemetry exporters are optional peers, imported only when an OTLP
// endpoint is configured: nobody else pays their import time. Checked in a
// child Node process on the built package (the exporters are CommonJS, so a
// loaded one shows in require.cache), with a control run that does load them.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const CHILD = `
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
const require = createRequire(import.meta.url);
const { createMemoryRelay } = await import(${JSON.stringify(path.join(ROOT, 'dist/src/backends/memory/index.js'))});
const relay = createMemoryRelay();
const withOtlp = process.argv[2] === 'otlp';
const config = { version: 4, atof: { enabled: false } };
if (withOtlp) config.opentelemetry = { enabled: true, endpoints: [{ type: 'full', endpoint: 'http://127.0.0.1:9', timeout_millis: 100 }] };
const activation = await relay.initializePluginConfig({ version: 1, components: [{ kind: 'observability', config }] });
const scope = relay.pushScope({ name: 's', category: 'agent' });
relay.popScope(scope);
await new Promise((r) => setTimeout(r, 200));
await activation.close();
const loaded = Object.keys(require.cache).filter((k) => k.includes('@opentelemetry')).length;
console.log(JSON.stringify({ loaded }));
process.exit(0);
`;

function loadedModules(mode: 'plain' | 'otlp'): number {
  const file = path.join(ROOT, '.tmp', `otlp-lazy-${process.pid}.mjs`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, CHILD);
  try {
    const result = spawnSync('node', [file, mode], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
    const line = result.stdout.trim().split('\n').pop() ?? '';
    expect(line, result.stderr).toMatch(/^\{"loaded":\d+\}$/);
    return (JSON.parse(line) as { loaded: number }).loaded;
  } finally {
    fs.rmSync(file, { force: true });
  }
}

describe('lazy OpenTelemetry exporters', () => {
  it('loads none of them when no OTLP endpoint is configured', () => {
    expect(loadedModules('plain')).toBe(0);
  });

  it('loads them once an endpoint is configured (the check above can fail)', () => {
    expect(loadedModules('otlp')).toBeGreaterThan(0);
  });

  it('has no static import of an OpenTelemetry package in src/', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (file.endsWith('.ts') && /^\s*(import|export)\s[^;]*?from\s+['"]@(opentelemetry|grpc)\//m.test(fs.readFileSync(file, 'utf8'))) offenders.push(path.relative(ROOT, file));
      }
    };
    walk(path.join(ROOT, 'src'));
    expect(offenders).toEqual([]);
  });
});
