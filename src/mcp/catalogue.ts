import { readFileSync } from 'node:fs';
import { OPERATIONS, type OperationEntry, type OperationKey, isToolOperation } from './operations.ts';

// The MCP tools, built from the committed openapi.json (itself generated from the TypeBox route
// schemas): one tool per operation, whose input is one JSON Schema object that holds the path
// parameters, the query parameters and the body's fields side by side. No body field shares a
// name with a parameter (the build refuses one that would), so an agent writes
// {websiteId, name} rather than {websiteId, body: {name}}.

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface JsonSchema {
  [keyword: string]: unknown;
}

export interface InputSchema {
  type: 'object';
  properties: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties: false;
}

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ToolDefinition {
  name: string;
  method: HttpMethod;
  /** The OpenAPI path, with {placeholders}. */
  path: string;
  summary: string;
  description: string;
  entry: OperationEntry;
  inputSchema: InputSchema;
  annotations: ToolAnnotations;
  pathParams: string[];
  queryParams: string[];
  bodyFields: string[];
  /** The operation takes a JSON body (sent as {} when no field is given). */
  hasBody: boolean;
  /** Without `confirm: true` the tool only answers what it would do. */
  needsConfirm: boolean;
}

interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  description?: string;
  schema?: JsonSchema;
}

interface Operation {
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, unknown>>;
}

export const OPENAPI_URL = new URL('../../openapi.json', import.meta.url);

const CONFIRM: JsonSchema = {
  type: 'boolean',
  description: 'true to do it; left out or false, nothing is done and the answer says what would be done',
};

const METHODS: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export function readOpenApiDocument(): OpenApiDocument {
  return JSON.parse(readFileSync(OPENAPI_URL, 'utf8')) as OpenApiDocument;
}

function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

function describeTool(summary: string, entry: OperationEntry, bodyNote: string | undefined, method: HttpMethod, path: string): string {
  const parts = [sentence(summary)];
  if (bodyNote) parts.push(`Fields: ${sentence(bodyNote)}`);
  parts.push(`Needs the permission ${entry.permission}.`);
  if (entry.note) parts.push(entry.note);
  if (entry.kind === 'credential') {
    parts.push(
      entry.alsoDestroys
        ? 'Issues a new secret and invalidates the old one: without confirm: true nothing is done and the answer says what would be done. The new secret is in the answer, once.'
        : 'Issues a credential: without confirm: true nothing is done and the answer says what would be done. The raw secret is in the answer, once.',
    );
  } else if (entry.kind === 'destroy') {
    parts.push('Destructive: without confirm: true nothing is done and the answer says what would be done.');
  }
  return `${parts.join(' ')}\n(${method} ${path})`;
}

function annotationsFor(entry: OperationEntry, method: HttpMethod): ToolAnnotations {
  const idempotent = method === 'GET' || method === 'PUT' || method === 'PATCH' || method === 'DELETE';
  switch (entry.kind) {
    case 'read':
      return { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
    case 'write':
      return { readOnlyHint: false, destructiveHint: false, idempotentHint: idempotent, openWorldHint: false };
    case 'destroy':
      return { readOnlyHint: false, destructiveHint: true, idempotentHint: idempotent, openWorldHint: false };
    case 'credential':
      return { readOnlyHint: false, destructiveHint: entry.alsoDestroys === true, idempotentHint: false, openWorldHint: false };
  }
}

function parameterSchema(parameter: Parameter): JsonSchema {
  const schema: JsonSchema = { ...(parameter.schema ?? {}) };
  if (parameter.description && schema.description === undefined) schema.description = parameter.description;
  return schema;
}

function buildTool(method: HttpMethod, path: string, operation: Operation, entry: OperationEntry): ToolDefinition {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const add = (name: string, schema: JsonSchema, isRequired: boolean) => {
    if (name in properties) throw new Error(`${method} ${path}: "${name}" is both a parameter and a body field`);
    properties[name] = schema;
    if (isRequired) required.push(name);
  };

  const parameters = operation.parameters ?? [];
  const pathParams = parameters.filter((p) => p.in === 'path');
  const queryParams = parameters.filter((p) => p.in === 'query');
  for (const parameter of [...pathParams, ...queryParams]) add(parameter.name, parameterSchema(parameter), parameter.in === 'path' || parameter.required === true);

  const body = operation.requestBody?.content?.['application/json']?.schema;
  const bodyProperties = (body?.properties ?? {}) as Record<string, JsonSchema>;
  const bodyRequired = new Set((body?.required ?? []) as string[]);
  for (const [name, schema] of Object.entries(bodyProperties)) add(name, schema, bodyRequired.has(name));

  const needsConfirm = entry.kind === 'destroy' || entry.kind === 'credential';
  if (needsConfirm) add('confirm', CONFIRM, false);

  const summary = operation.summary ?? `${method} ${path}`;
  const bodyNote = typeof body?.description === 'string' ? body.description : undefined;
  return {
    name: entry.tool,
    method,
    path,
    summary,
    description: describeTool(summary, entry, bodyNote, method, path),
    entry,
    inputSchema: { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false },
    annotations: annotationsFor(entry, method),
    pathParams: pathParams.map((p) => p.name),
    queryParams: queryParams.map((p) => p.name),
    bodyFields: Object.keys(bodyProperties),
    hasBody: body !== undefined,
    needsConfirm,
  };
}

/** "METHOD /path" for every operation of the document that becomes a tool. */
export function toolOperations(document: OpenApiDocument): OperationKey[] {
  const keys: OperationKey[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      if (item[method.toLowerCase()] && isToolOperation(method, path)) keys.push(`${method} ${path}`);
    }
  }
  return keys;
}

export interface Catalogue {
  tools: ToolDefinition[];
  byName: Map<string, ToolDefinition>;
  /** Operations of the document without an entry in OPERATIONS: left out, and a failing test. */
  unnamed: OperationKey[];
}

export function buildCatalogue(document: OpenApiDocument = readOpenApiDocument()): Catalogue {
  const tools: ToolDefinition[] = [];
  const unnamed: OperationKey[] = [];
  const keys = toolOperations(document);
  for (const key of keys) {
    const entry = OPERATIONS[key];
    if (!entry) {
      unnamed.push(key);
      continue;
    }
    const [method, path] = key.split(' ') as [HttpMethod, string];
    tools.push(buildTool(method, path, document.paths[path]![method.toLowerCase()] as Operation, entry));
  }

  const byName = new Map<string, ToolDefinition>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new Error(`Two operations share the MCP tool name ${tool.name}`);
    byName.set(tool.name, tool);
  }
  return { tools, byName, unnamed };
}
