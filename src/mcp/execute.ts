import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { describeValidationErrors } from '../http/validation.ts';
import { type Api, NetworkError, describeFailure, isErrorEnvelope } from './api.ts';
import type { ToolDefinition } from './catalogue.ts';
import { preview } from './previews.ts';
import { filesAsText } from './downloads.ts';

// One tool call: check the arguments against the tool's input schema (the route's own rules, so
// a bad argument is refused here with the field named, before any request), stop at a preview
// when a destructive or credential-issuing tool lacks confirm: true, else call the API and hand
// back its JSON answer as text.

export interface ToolResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  isError?: boolean;
}

// Strict like the server's body validator: JSON arguments are never coerced, and nothing unknown
// is dropped silently.
const ajv = new Ajv({ coerceTypes: false, useDefaults: false, removeAdditional: false, allErrors: false, strict: false });
addFormats.default(ajv);
const validators = new Map<string, ValidateFunction>();

function validatorFor(tool: ToolDefinition): ValidateFunction {
  let validate = validators.get(tool.name);
  if (!validate) {
    validate = ajv.compile(tool.inputSchema);
    validators.set(tool.name, validate);
  }
  return validate;
}

export function text(value: string, isError = false): ToolResult {
  return { content: [{ type: 'text', text: value }], ...(isError ? { isError: true } : {}) };
}

/** null when the arguments are valid, else the sentence that says what is wrong. */
export function checkArguments(tool: ToolDefinition, args: unknown): string | null {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return `Invalid arguments for ${tool.name}: must be an object`;
  const validate = validatorFor(tool);
  if (validate(args)) return null;
  const [detail] = describeValidationErrors('arguments', validate.errors ?? []);
  const field = detail?.path.replace(/^arguments\.?/, '') || 'arguments';
  return `Invalid arguments for ${tool.name}: ${field} ${detail?.message ?? 'is invalid'}`;
}

function pick(args: Record<string, unknown>, names: string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const name of names) if (args[name] !== undefined) picked[name] = args[name];
  return picked;
}

const SECRET_NOTE = 'The raw secret above is shown this once; hand it to the user or store it now.';

export async function executeTool(tool: ToolDefinition, rawArgs: unknown, api: Api | string): Promise<ToolResult> {
  const args = (rawArgs ?? {}) as Record<string, unknown>;
  const problem = checkArguments(tool, args);
  if (problem) return text(problem, true);
  // A string in place of the API says why there is none (no credential configured).
  if (typeof api === 'string') return text(api, true);

  try {
    if (tool.needsConfirm && args.confirm !== true) return text(await preview(tool, args, api));
    const response = await api({
      method: tool.method,
      path: tool.path,
      pathParams: pick(args, tool.pathParams),
      query: pick(args, tool.queryParams),
      body: tool.hasBody ? pick(args, tool.bodyFields) : undefined,
      binary: tool.entry.download !== undefined,
    });
    if (response.bytes && tool.entry.download) return filesAsText(response.bytes, tool.entry.download);
    if (response.status >= 400 || isErrorEnvelope(response.body) || response.body === null) {
      return text(describeFailure(response), true);
    }
    const result = text(JSON.stringify(response.body, null, 2));
    if (tool.entry.kind === 'credential') result.content.push({ type: 'text', text: SECRET_NOTE });
    return result;
  } catch (error) {
    if (error instanceof NetworkError) return text(error.message, true);
    throw error;
  }
}
