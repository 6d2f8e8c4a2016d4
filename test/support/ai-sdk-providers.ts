// The AI SDK provider packages the suite runs its real programs on, one
// entry per major. 4.x is the newest, and declares node >= 22; on Node 20
// npm skips majors whose engines do not match, so `npm install ai
// @ai-sdk/openai` there gives `ai` 7 (forced by this package's peer range)
// beside @ai-sdk/openai, /anthropic and /google 3.x, whose models speak the
// older provider specification (v3) that `ai` 7 adapts. 3.x is installed
// under aliases (package.json devDependencies). A test body takes its
// models from an entry, so each program runs once per major.
import type { LanguageModel } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic as createAnthropic3 } from '@ai-sdk/anthropic-3';
import { createGoogleGenerativeAI as createGoogle3 } from '@ai-sdk/google-3';
import { createOpenAI as createOpenAI3 } from '@ai-sdk/openai-3';

/** A provider package's model, whichever specification it speaks. */
export type ProviderModel = Exclude<LanguageModel, string>;

export interface ProviderSettings {
  apiKey: string;
  fetch: typeof globalThis.fetch;
}

export interface OpenAIProvider {
  /** The Responses API (the default). */
  (modelId: string): ProviderModel;
  /** Chat Completions. */
  chat(modelId: string): ProviderModel;
  responses(modelId: string): ProviderModel;
}

export interface ProviderPackages {
  /** The major, as test names show it. */
  readonly major: '4.x' | '3.x';
  openai(settings: ProviderSettings): OpenAIProvider;
  anthropic(settings: ProviderSettings): (modelId: string) => ProviderModel;
  google(settings: ProviderSettings): (modelId: string) => ProviderModel;
}

export const AI_SDK_PROVIDERS: readonly ProviderPackages[] = [
  { major: '4.x', openai: createOpenAI, anthropic: createAnthropic, google: createGoogleGenerativeAI },
  { major: '3.x', openai: createOpenAI3, anthropic: createAnthropic3, google: createGoogle3 },
];
