// Starts `nemo-relay-hooks view --serve` in a child process (the runtime under
// test, like cli()), waits for the URL it prints, and stops it with SIGINT as
// Ctrl-C would.
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { command, ROOT, runtime } from './support.ts';

export interface Served {
  url: string;
  /** Sends SIGINT and resolves with how the process ended. */
  stop(): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>;
}

export function serve(args: readonly string[]): Promise<Served> {
  const { file, args: prefix } = command();
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', FORCE_COLOR: undefined };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  const child = spawn(file, [...prefix, 'view', '--serve', ...args], { cwd: ROOT, env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const ended = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return new Promise<Served>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`view --serve printed no URL in 60 s:\n${stdout}\n${stderr}`));
    }, 60_000);
    const look = () => {
      const match = /at (http:\/\/\S+\/) \(Ctrl-C stops\)/.exec(stdout);
      if (!match) return;
      clearTimeout(timer);
      child.stdout.off('data', look);
      resolve({
        url: match[1]!,
        stop: async () => {
          child.kill('SIGINT');
          const how = await ended;
          // Deno's child_process reports a child that handled SIGINT and exited 0 as killed by SIGINT
          // (a Node parent sees exit code 0 from the same Deno child); "stopped" is what the CLI prints after closing.
          if (runtime === 'deno' && how.signal === 'SIGINT' && stderr.endsWith('stopped\n')) return { code: 0, signal: null, stdout, stderr };
          return { ...how, stdout, stderr };
        },
      });
    };
    child.stdout.on('data', look);
    void ended.then((how) => {
      clearTimeout(timer);
      reject(new Error(`view --serve ended early (${JSON.stringify(how)}):\n${stdout}\n${stderr}`));
    });
  });
}

/** A GET of `url`: its status, body and content type. */
export function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; type: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, type: String(res.headers['content-type']) }));
    });
    req.on('error', reject);
    req.end();
  });
}
