/**
 * The AI SDK's own chat client outside React (`AbstractChat`, what `useChat`
 * drives), for tests that send what a browser's chat sends and read the UI
 * stream back: its state is a plain array, as `useChat` keeps it in React
 * state.
 */
import { AbstractChat, type ChatInit, type ChatState, type ChatStatus, type UIMessage } from 'ai';

/** A chat's state as a plain array (what `useChat` keeps in React state). */
class ArrayState<M extends UIMessage> implements ChatState<M> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  messages: M[] = [];
  pushMessage = (message: M): void => void (this.messages = [...this.messages, message]);
  popMessage = (): void => void (this.messages = this.messages.slice(0, -1));
  replaceMessage = (index: number, message: M): void => void (this.messages = this.messages.map((one, i) => (i === index ? message : one)));
  snapshot = <T,>(thing: T): T => structuredClone(thing);
}

/** The SDK's chat client outside React, as @ai-sdk/react's `Chat` subclasses it. */
export class Chat extends AbstractChat<UIMessage> {
  constructor(init: ChatInit<UIMessage>) {
    super({ ...init, state: new ArrayState<UIMessage>() });
  }
}

/** Polls `check`: the chat client (and a chat route's server) report by state, not by events a test can await. */
export async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 2));
}
