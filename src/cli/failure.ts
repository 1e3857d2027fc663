/** Ends the command with `sightline: <message>` on stderr (1: it could not be done; 2: it was asked wrongly). */
export function fail(message: string, code = 1): never {
  process.stderr.write(`sightline: ${message}\n`);
  process.exit(code);
}

/** One line for an error, whatever its shape (AggregateError has no message of its own). */
export function messageOf(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error);
  const { message, code, errors } = error as { message?: unknown; code?: unknown; errors?: unknown };
  let text = typeof message === 'string' ? message : '';
  if (!text && Array.isArray(errors) && errors.length > 0) text = [...new Set(errors.map(messageOf))].join('; ');
  if (!text) text = typeof code === 'string' ? code : 'unknown error';
  return text.replace(/\s+/g, ' ').trim();
}
