import type { FastifyRequest } from 'fastify';
import { badRequest } from '../../errors.ts';
import { validatorCompiler } from '../../http/validation.ts';
import { hostedConnectBody } from './integrations.schemas.ts';
import { CONNECT_FIELDS, type Provider, hostedFieldName } from './providers.ts';

// A connect body names the credentials as Sightline does (providerOneRestrictedKey) or as the
// hosted service does (stripeRak), at either path of the provider: one set or the other, never a
// mix (docs/decisions.md). A body in the hosted names is checked against the same rules under
// those names, so a 400 names the field the client sent; it is then renamed for the route's own
// schema, and what is stored always carries Sightline's names.

type Body = Record<string, unknown>;

const isObject = (value: unknown): value is Body => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A validation failure in the form Fastify gives its own, so the error handler words it the same. */
function invalidBody(errors: unknown) {
  return Object.assign(new Error('body validation failed'), { statusCode: 400, validation: errors, validationContext: 'body' });
}

/**
 * The preValidation hook of a provider's connect route. At the hosted path a body that uses none
 * of Sightline's names is read in the hosted names (so `{}` is told which hosted field is
 * missing); at Sightline's path only a body that uses a hosted name is.
 */
export function acceptHostedFieldNames(provider: Provider, atHostedPath: boolean) {
  const fields = CONNECT_FIELDS[provider] ?? [];
  const hosted = fields.map(hostedFieldName);
  const validate = validatorCompiler({ schema: hostedConnectBody(provider), httpPart: 'body', method: 'POST', url: '' });

  return async (request: FastifyRequest): Promise<void> => {
    const body = request.body;
    if (!isObject(body)) return;
    const own = fields.filter((field) => field in body);
    const theirs = hosted.filter((field) => field in body);
    if (own.length > 0 && theirs.length > 0) {
      const message =
        `body mixes Sightline's field names (${own.join(', ')}) with the hosted service's (${theirs.join(', ')}): ` +
        `send either ${fields.join(' and ')}, or ${hosted.join(' and ')}`;
      throw badRequest(message, [{ path: 'body', message }]);
    }
    if (theirs.length === 0 && (own.length > 0 || !atHostedPath)) return;
    if (!validate(body)) throw invalidBody((validate as unknown as { errors: unknown }).errors);
    request.body = Object.fromEntries(fields.map((field) => [field, body[hostedFieldName(field)]]));
  };
}
