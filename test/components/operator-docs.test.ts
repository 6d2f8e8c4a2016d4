// The operators' pages: every TypeScript block (redaction, pricing, the
// response cache) runs as written, importing the package by name (dist/),
// on Node, Bun and Deno, in a user's environment (the default outputs on),
// and does what the page says; every plugins.toml block is a document both
// backends accept (on its own, as components of a document, or as tables of
// the observability component's config: streams, uploads, OTLP endpoints).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'smol-toml';
import { validatePluginConfig } from '../../src/formats/plugins-toml/validate.ts';
import { nativePlugin, nativeUnavailable } from '../support/native-driver.ts';
import { withProcessEnv } from '../support/process-env.ts';
import { withSourcesForValidation } from '../../src/plugin/price-sources.ts';
import type { JsonObject } from '../../src/shared/json.ts';
import { SNIPPET_RUNTIMES, repoRoot as ROOT, runSnippet, tsSnippets, userEnv } from '../support/doc-snippets.ts';
const PAGES = fs.readdirSync(path.join(ROOT, 'docs/operators')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/operators/${name}`);

// Under Bun a change to process.env does not reach native code.
const bun = typeof (process.versions as Record<string, string | undefined>).bun === 'string';

function blocks(text: string, language: string): string[] {
  const out: string[] = [];
  const fence = new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g');
  for (const match of text.matchAll(fence)) out.push(match[1]!);
  return out;
}

/**
 * A block as the document it belongs to: a whole document as it is; `[[components]]` with a version added; tables of
 * the observability component's config (`[components.config.atif]`, `[[components.config.atof.sinks]]`) inside one.
 */
function asDocument(parsed: Record<string, unknown>): JsonObject {
  if ('version' in parsed) return parsed as JsonObject;
  const components = parsed.components;
  if (components !== null && typeof components === 'object' && !Array.isArray(components)) {
    return { version: 1, components: [{ kind: 'observability', config: { version: 4, ...((components as { config?: JsonObject }).config ?? {}) } }] };
  }
  return { version: 1, ...parsed } as JsonObject;
}

/** The variables a block reads its secrets from (`header_env` values, `*_var` keys): set by the operator before the plugin starts. */
function secretVariables(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) secretVariables(item, out);
  else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'header_env' && inner !== null && typeof inner === 'object') out.push(...Object.values(inner).filter((name): name is string => typeof name === 'string'));
      else if (key.endsWith('_var') && typeof inner === 'string') out.push(inner);
      else secretVariables(inner, out);
    }
  }
  return out;
}

/** What each TypeScript block of a page must have written, in its folder. */
const TS_CHECKS: Record<string, ((cwd: string, stdout: string) => void)[]> = {
  'docs/operators/pricing.md': [
    (cwd, stdout) => {
      // 1000 × 0.15 / 1e6 + 500 × 0.6 / 1e6, as the page computes it.
      expect(stdout.trim()).toBe('0.00045');
      const files = fs.readdirSync(path.join(cwd, 'trajectories'));
      expect(files).toHaveLength(1);
      const trajectory = JSON.parse(fs.readFileSync(path.join(cwd, 'trajectories', files[0]!), 'utf8'));
      expect(trajectory.extra.nemo_relay.session_id).toBe('run-1');
      expect(trajectory.steps.filter((step: { metrics?: { cost_usd?: number } }) => step.metrics?.cost_usd !== undefined).map((step: { metrics: { cost_usd: number } }) => step.metrics.cost_usd)).toEqual([0.00045]);
    },
  ],
  'docs/operators/cache.md': [
    (cwd, stdout) => {
      // Two equal calls at temperature 0: one reaches the provider, the second is answered from the cache.
      expect(stdout.trim()).toBe('1');
      const events = fs.readFileSync(path.join(cwd, 'events', 'events.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
      const marks = events.filter((event) => event.name === 'response_cache');
      expect(marks.map((mark) => [mark.data.status, mark.metadata['nemo_relay.response_cache.surface']])).toEqual([
        ['miss', 'llm'],
        ['hit', 'llm'],
      ]);
      expect(events.filter((event) => event.category === 'llm' && event.scope_category === 'end')).toHaveLength(2);
    },
    (cwd, stdout) => {
      // Two tenants, the same question: each gets its own answer (x-tenant is keyed); acme's second call is a hit.
      expect(stdout.trim().split('\n')).toEqual(["acme's balance is $1,234", "globex's balance is $1,234", "acme's balance is $1,234"]);
      const text = fs.readFileSync(path.join(cwd, 'events', 'events.jsonl'), 'utf8');
      const events = text.trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
      expect(events.filter((event) => event.name === 'response_cache').map((mark) => mark.data.status)).toEqual(['miss', 'miss', 'hit']);
      const starts = events.filter((event) => event.category === 'llm' && event.scope_category === 'start');
      expect(starts.map((event) => event.data.headers['x-tenant'])).toEqual(['acme', 'globex', 'acme']);
      // The credential header reached the host's call, never an output.
      expect(text).not.toContain('sk-not-recorded');
      expect(starts.some((event) => 'authorization' in event.data.headers)).toBe(false);
    },
  ],
  'docs/operators/redaction.md': [
    (cwd) => {
      // A user copies the block as it is, with the default outputs on: nothing it leaves behind names the customer,
      // neither a file's name nor its content, and the session's trajectory is named as the hook leaves its id.
      const written = fs.readdirSync(cwd, { recursive: true, encoding: 'utf8' }).filter((name) => fs.statSync(path.join(cwd, name)).isFile()).sort();
      const outputs = written.filter((name) => name.startsWith('nemo-relay-output'));
      expect(outputs).toHaveLength(2);
      expect(outputs.filter((name) => /^nemo-relay-output[/\\][^/\\]+-atof\.jsonl$/.test(name)), outputs.join(', ')).toHaveLength(1);
      expect(outputs.filter((name) => /^nemo-relay-output[/\\][^/\\]+-atif-_email_-[0-9a-f]{12}\.json$/.test(name)), outputs.join(', ')).toHaveLength(1);
      for (const name of written) {
        expect(name).not.toContain('ana');
        const text = fs.readFileSync(path.join(cwd, name), 'utf8');
        expect(text.includes('ana@example.com'), name).toBe(false);
        expect(text.includes('VIP'), name).toBe(false);
      }
      const atof = outputs.find((name) => name.endsWith('.jsonl'))!;
      const events = fs.readFileSync(path.join(cwd, atof), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
      expect(events.some((event) => event.category === 'tool' && event.scope_category === 'start' && JSON.stringify(event.data) === '{"order":42}')).toBe(true);
      expect(events.some((event) => typeof event.name === 'string' && event.name.includes('<email>'))).toBe(true);
      const trajectory = JSON.parse(fs.readFileSync(path.join(cwd, outputs.find((name) => name.endsWith('.json'))!), 'utf8'));
      expect([trajectory.session_id, trajectory.trajectory_id]).toEqual(['<email>', '<email>']);
      expect(JSON.stringify(trajectory.steps)).toContain('Where is order 42?');
    },
  ],
};

describe('operators docs', () => {
  for (const page of PAGES) {
    const text = fs.readFileSync(path.join(ROOT, page), 'utf8');
    // Each page's TypeScript blocks, and what running each one must leave behind.
    const checks = TS_CHECKS[page] ?? [];
    it(`${page}: every TypeScript block is run below`, () => {
      expect(tsSnippets(text)).toHaveLength(checks.length);
    });
    tsSnippets(text).forEach((code, i) => {
      for (const runtime of SNIPPET_RUNTIMES) {
        it(`${page}: TypeScript block ${i + 1} runs as written on ${runtime}`, async () => {
          const result = await runSnippet(code, runtime, path.basename(page, '.md'), userEnv({ NO_COLOR: '1' }));
          try {
            expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
            checks[i]!(result.cwd, result.stdout);
          } finally {
            fs.rmSync(result.cwd, { recursive: true, force: true });
          }
        }, 130_000);
      }
    });
    blocks(text, 'toml').forEach((toml, i) => {
      const base = asDocument(parse(toml) as Record<string, unknown>);
      // A genai_prices source is resolved by the plugin before any validator sees the document.
      const document = () => withSourcesForValidation(base);
      // Both validators check that a secret variable the block names is set, as the operator sets it where the document is used.
      const secrets = secretVariables(base);
      const operatorEnv = () => withProcessEnv(Object.fromEntries(secrets.filter((name) => process.env[name] === undefined).map((name) => [name, 'set-by-the-operator'])));
      it(`${page}: plugins.toml block ${i + 1} is accepted by our validator`, () => {
        operatorEnv();
        expect(validatePluginConfig(document()).diagnostics.filter((d) => d.level === 'error')).toEqual([]);
      });
      const nativeSkipped =
        nativePlugin === null ? ` (skipped: ${nativeUnavailable})` : bun && secrets.length > 0 ? ` (skipped on Bun: it names ${secrets.join(', ')}, and a variable set in process.env there does not reach native code)` : '';
      it.skipIf(nativeSkipped !== '')(`${page}: plugins.toml block ${i + 1} is accepted by native's validator${nativeSkipped}`, () => {
        operatorEnv();
        expect((nativePlugin!.validate(document()).config.diagnostics as { level: string }[]).filter((d) => d.level === 'error')).toEqual([]);
      });
    });
  }
});
