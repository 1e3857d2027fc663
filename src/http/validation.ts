import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { ErrorDetail } from '../errors.ts';

// Two validators: bodies are strict (a wrong type is a 400, never coerced), while path and
// query strings arrive as text and are coerced to the schema's types. Nothing is removed
// silently: an unknown field is an error that names it.

function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
  addFormats.default(ajv);
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv('array');

/** The first top-level field of a query or of path parameters whose text holds a NUL character. */
function fieldWithNul(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  for (const [key, value] of Object.entries(data)) {
    const texts = Array.isArray(value) ? value : [value];
    if (texts.some((text) => typeof text === 'string' && text.includes('\u0000'))) return key;
  }
  return undefined;
}

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  if (httpPart === 'body') return bodyAjv.compile(schema as object) as ValidateFunction;
  const validate = textAjv.compile(schema as object);
  // Query and path text reaches the database as is, and PostgreSQL refuses a NUL in text (a 5xx
  // otherwise): refused here for every route, as the JSON body parser refuses it in bodies.
  const guarded = (data: unknown) => {
    const key = fieldWithNul(data);
    if (key === undefined) {
      const valid = validate(data);
      guarded.errors = validate.errors;
      return valid;
    }
    guarded.errors = [{ keyword: 'nul', instancePath: `/${key}`, schemaPath: '', params: {}, message: 'must not contain a NUL character' }] as ErrorObject[];
    return false;
  };
  guarded.errors = null as ErrorObject[] | null | undefined;
  return guarded;
};

function pathOf(context: string, instancePath: string): string {
  const segments = instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  return segments.reduce((path, s) => (/^\d+$/.test(s) ? `${path}[${s}]` : `${path}.${s}`), context);
}

function describe(error: ErrorObject): string {
  switch (error.keyword) {
    case 'additionalProperties':
      return 'is not an allowed field';
    case 'required':
      return 'is required';
    case 'enum':
      return `must be one of: ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(error.params.allowedValue)}`;
    case 'minProperties':
      return error.params.limit === 1 ? 'must contain at least one field' : (error.message ?? 'has too few fields');
    default:
      return error.message ?? 'is invalid';
  }
}

/**
 * An unknown field's name is client input: echo it only when it reads like a field name, never
 * when it could be a secret pasted in the wrong place (a token, a provider key).
 */
const FIELD_NAME = /^[a-z][A-Za-z0-9_-]{0,39}$/;
const SECRET_LIKE = /^(dft?|sk|pk|rk|whsec)_|\d{6}|[a-z][A-Z0-9].*[A-Z0-9].*[0-9]|^(?=.{17,}).*\d/;

export function safeFieldName(name: string): string {
  return FIELD_NAME.test(name) && !SECRET_LIKE.test(name) ? name : '<an unknown field, name withheld>';
}

function fieldOf(context: string, error: ErrorObject): string {
  const base = pathOf(context, error.instancePath);
  if (error.keyword === 'additionalProperties') return `${base}.${safeFieldName(String(error.params.additionalProperty))}`;
  if (error.keyword === 'required') return `${base}.${error.params.missingProperty}`;
  return base;
}

/** Turns Ajv's errors into one detail per failing field, naming the field. */
export function describeValidationErrors(context: string, errors: ErrorObject[]): ErrorDetail[] {
  const anyOf = errors.find((e) => e.keyword === 'anyOf');
  if (anyOf) {
    // A union (for example "string or null") failed: a branch whose type matched but whose
    // rule did not says the most; otherwise list the accepted types.
    const branches = errors.filter((e) => e.schemaPath.startsWith(`${anyOf.schemaPath}/`));
    // An error deeper than the union itself (an item of a nullable list, say) names the field best.
    const deeper = branches.find((e) => e.instancePath.length > anyOf.instancePath.length);
    const specific = deeper ?? branches.find((e) => e.keyword !== 'type' && e.keyword !== 'const');
    if (specific) return [{ path: fieldOf(context, specific), message: describe(specific) }];
    const accepted = branches.map((e) =>
      e.keyword === 'const' ? JSON.stringify(e.params.allowedValue) : String(e.params.type),
    );
    return [{ path: pathOf(context, anyOf.instancePath), message: `must be ${[...new Set(accepted)].join(' or ')}` }];
  }
  const first = errors[0];
  if (!first) return [{ path: context, message: 'is invalid' }];
  return [{ path: fieldOf(context, first), message: describe(first) }];
}
