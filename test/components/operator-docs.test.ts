// The operators' pages on redaction, pricing and the response cache: every
// TypeScript block runs as written (with the package name pointing at this
// checkout), and every plugins.toml block is a document both backends accept
// (on its own, or as components added to an observability document).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'smol-toml';
import { validatePluginConfig } from '../../src/formats/plugins-toml/validate.ts';
import { nativePlugin } from '../memory/native-driver.ts';
import { withSourcesForValidation } from '../../src/plugin/price-sources.ts';
import type { JsonObject } from '../../src/shared/json.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PAGES = ['docs/operators/redaction.md', 'docs/operators/pricing.md', 'docs/operators/cache.md'].filter((page) => fs.existsSync(path.join(ROOT, page)));

function blocks(text: string, language: string): string[] {
  const out: string[] = [];
  const fence = new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g');
  for (const match of text.matchAll(fence)) out.push(match[1]!);
  return out;
}

describe('operators docs', () => {
  for (const page of PAGES) {
    const text = fs.readFileSync(path.join(ROOT, page), 'utf8');
    blocks(text, 'ts').forEach((code, i) => {
      it(`${page}: TypeScript block ${i + 1} runs as written`, async () => {
        const dir = path.join(ROOT, '.tmp', 'docs-snippets');
        fs.mkdirSync(dir, { recursive: true });
        const file = path.join(dir, `${path.basename(page, '.md')}-${i + 1}.ts`);
        const entry = pathToFileURL(path.join(ROOT, 'src/index.ts')).href;
        fs.writeFileSync(file, code.replace(/from 'nemo-relay-hooks'/g, `from '${entry}'`));
        await import(pathToFileURL(file).href);
      });
    });
    blocks(text, 'toml').forEach((toml, i) => {
      it(`${page}: plugins.toml block ${i + 1} is accepted by both validators`, () => {
        const parsed = parse(toml) as Record<string, unknown>;
        // A genai_prices source is resolved by the plugin before any validator sees the document.
        const document = withSourcesForValidation(('version' in parsed ? parsed : { version: 1, ...parsed }) as JsonObject);
        const ours = validatePluginConfig(document).diagnostics.filter((d) => d.level === 'error');
        expect(ours).toEqual([]);
        if (nativePlugin !== null) expect((nativePlugin.validate(document).config.diagnostics as { level: string }[]).filter((d) => d.level === 'error')).toEqual([]);
      });
    });
  }
});
