import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { CliError } from './api.ts';

// Everything the client reads from the person or the pipe in front of it: confirmations,
// secrets (never from argv, never echoed) and JSON bodies.

export function stdinIsTerminal(): boolean {
  return Boolean(process.stdin.isTTY);
}

/** All of stdin as text (for a pipe or a redirected file). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function interrupted(): never {
  process.stderr.write('\n');
  process.exit(130);
}

/** Asks on the terminal without showing what is typed (the terminal's own echo is off in raw mode). */
export async function promptHidden(question: string): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  rl.on('SIGINT', () => {
    rl.close();
    interrupted();
  });
  try {
    const answer = new Promise<string>((resolve) => rl.question(question, resolve));
    muted = true;
    return (await answer).trim();
  } finally {
    muted = false;
    rl.close();
    process.stderr.write('\n');
  }
}

/** Asks on the terminal (the question on stderr) and returns what was typed. */
export async function promptVisible(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  rl.on('SIGINT', () => {
    rl.close();
    interrupted();
  });
  try {
    return await new Promise<string>((resolve) => rl.question(question, resolve));
  } finally {
    rl.close();
  }
}

export interface ConfirmOptions {
  yes?: boolean;
}

/**
 * Destructive commands: --yes goes ahead; on a terminal the person answers y/N; without a
 * terminal and without --yes it is a usage error (exit 2), so a script never hangs on a prompt.
 * `what` reads as an order ("revoke token 665f..."), `consequence` as a sentence.
 */
export async function confirm(what: string, consequence: string, options: ConfirmOptions): Promise<void> {
  if (options.yes) return;
  if (!stdinIsTerminal()) {
    throw new CliError(`${what}: add --yes to confirm (there is no terminal to ask on); nothing was changed`, 2);
  }
  const question = `${what.charAt(0).toUpperCase()}${what.slice(1)}? ${consequence} [y/N] `;
  const answer = (await promptVisible(question)).trim().toLowerCase();
  if (answer !== 'y' && answer !== 'yes') throw new CliError('cancelled; nothing was changed', 1);
}

/** Reads a JSON object from a file, or from stdin for "-" (the --body option). */
export async function readJsonBody(source: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = source === '-' ? await readStdin() : readFileSync(source, 'utf8');
  } catch (error) {
    throw new CliError(`--body: cannot read ${source}: ${(error as Error).message}`, 2);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new CliError(`--body: ${source === '-' ? 'stdin' : source} is not valid JSON: ${(error as Error).message}`, 2);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new CliError(`--body: ${source === '-' ? 'stdin' : source} must hold a JSON object`, 2);
  }
  return parsed as Record<string, unknown>;
}
