// An environment whose every read throws, as Deno's process.env does
// without --allow-env (NotCapable), for tests that run on any runtime.

export class NotCapable extends Error {
  override name = 'NotCapable';
}

export function refusingEnv(): Record<string, string | undefined> {
  return new Proxy({} as Record<string, string | undefined>, {
    get(_target, name) {
      throw new NotCapable(`Requires env access to "${String(name)}", run again with the --allow-env flag`);
    },
    has() {
      throw new NotCapable('Requires env access');
    },
    ownKeys() {
      throw new NotCapable('Requires env access');
    },
  });
}
