// Values written into ClickHouse SQL as literals. The ClickHouse this project must support (18.16,
// Debian's) has no server-side query parameters ({name:Type} came in 19.15), so every value a
// request supplies goes through this one function: strings are quoted with every backslash and
// quote escaped and every control character spelled \xHH, numbers must be finite, and anything
// else is refused. test/clickhouse-literal.test.ts round-trips hostile strings through a real
// server.

// eslint-disable-next-line no-control-regex -- control characters are exactly what must be escaped
const ESCAPED = /[\\'\u0000-\u001f\u007f]/g;

function escapeChar(char: string): string {
  if (char === '\\') return '\\\\';
  if (char === "'") return "\\'";
  return `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`;
}

export function stringLiteral(value: string): string {
  return `'${value.replace(ESCAPED, escapeChar)}'`;
}

export function clickhouseLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return stringLiteral(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`);
    return String(value);
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (Array.isArray(value)) return `[${value.map(clickhouseLiteral).join(', ')}]`;
  throw new TypeError(`no ClickHouse literal for ${Object.prototype.toString.call(value)}`);
}
