import { type TSchema, Type } from 'typebox';
import { ID_PATTERN } from '../lib/ids.ts';

// Shared primitives and the contract's envelope (section 2), so every module builds its
// route schemas from the same parts.

export const Id = Type.String({ pattern: ID_PATTERN, description: '24 lowercase hex characters', examples: ['65f1c0ffee0ddba11ad0be75'] });
/** Where the website API takes a website in its query: the id or the tracking script's trackingId. */
export const WebsiteRef = Type.String({
  pattern: '^([0-9a-f]{24}|dfid_[A-Za-z0-9]{1,64})$',
  description: "the website's id or its trackingId (dfid_...); not needed with the website's own df_ key",
  examples: ['65f1c0ffee0ddba11ad0be75'],
});
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO-8601 UTC with milliseconds' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

/** The success envelope: `{status: "success", data: [item, ...]}` plus named siblings. */
export function Envelope<T extends TSchema>(item: T, siblings: Record<string, TSchema> = {}) {
  return Type.Object({
    status: Type.Literal('success'),
    data: Type.Array(item),
    ...siblings,
  });
}

export const ErrorEnvelope = Type.Object({
  status: Type.Literal('error'),
  error: Type.Object({
    code: Type.Integer(),
    message: Type.String(),
    details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
    requestId: Type.Optional(Type.String()),
  }),
});

export const Message = Type.Object({ message: Type.String() });

export const WebsiteParams = Type.Object({ websiteId: Id }, { additionalProperties: false });

/** Responses every authenticated route may give, for the OpenAPI document. */
export function withErrors<T extends Record<number, TSchema>>(success: T) {
  return {
    ...success,
    400: ErrorEnvelope,
    401: ErrorEnvelope,
    403: ErrorEnvelope,
    404: ErrorEnvelope,
    413: ErrorEnvelope,
    415: ErrorEnvelope,
    429: ErrorEnvelope,
  };
}

/** Beside `data` on a list: the page asked for, and how many match in all. */
export function Pagination(total = 'rows matching the query, before limit and offset') {
  return Type.Object({ limit: Type.Integer(), offset: Type.Integer(), total: Type.Integer({ description: total }) });
}

export function presentPagination(page: { limit: number; offset: number }, total: number) {
  return { limit: page.limit, offset: page.offset, total };
}

/** The success reply: data is always an array on admin routes. */
export function ok<T>(data: T[]): { status: 'success'; data: T[] } {
  return { status: 'success', data };
}

/** Goal names (contract section 4): lower case, [a-z0-9_:-], 1-64 characters, not "identify". */
export const GoalName = Type.String({
  pattern: '^(?!identify$)[a-z0-9_:-]{1,64}$',
  description: 'lower case letters, digits, _ : -; 1-64 characters; not "identify"',
  examples: ['signup'],
});

/** For routes that take no fields: an empty body, `{}` or none at all. */
export const EmptyBody = Type.Object({}, { additionalProperties: false });
