/** Ends the command with `sightline: <message>` on stderr (1: it could not be done; 2: it was asked wrongly). */
export function fail(message: string, code = 1): never {
  process.stderr.write(`sightline: ${message}\n`);
  process.exit(code);
}
