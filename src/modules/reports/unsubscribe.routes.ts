import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { digestSecret } from '../../auth/sessions.ts';
import { deliveryByDigest, setChoice } from './reports.repository.ts';
import type { MailKind } from './report-periods.ts';

// The unsubscribe link of every report and spike mail: PUBLIC_URL/mail/unsubscribe/<token>. It
// works without signing in: the token, whose digest is stored with the delivery it came with,
// names the website, the member and the kind of mail. GET shows a page that asks to confirm (a
// mail scanner that follows links unsubscribes no one); POST unsubscribes, and is also what a mail
// client's one-click unsubscribe sends (List-Unsubscribe-Post, RFC 8058), with whatever form body.
// Pages, not API: outside the guarded scope and the OpenAPI document, like the dashboard's pages.

export const UNSUBSCRIBE_PATH = '/mail/unsubscribe/:token';

const KIND_NAMES: Record<MailKind, string> = { weekly: 'weekly report', monthly: 'monthly report', spike: 'traffic-spike alerts' };

const POLICY = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function page(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  const html =
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${escapeHtml(title)} · Sightline</title></head>` +
    '<body style="font-family:system-ui,Arial,sans-serif;background:#f3f4f6;color:#111827;margin:0;padding:48px 16px;">' +
    `<main style="max-width:480px;margin:0 auto;background:#ffffff;border-radius:8px;padding:24px;"><h1 style="font-size:20px;margin-top:0;">${escapeHtml(title)}</h1>${body}</main>` +
    '</body></html>';
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('content-security-policy', POLICY)
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .type('text/html; charset=utf-8')
    .send(html);
}

const notValid = (reply: FastifyReply) =>
  page(reply, 404, 'Link not valid', '<p>This unsubscribe link is not valid. Change what Sightline mails you in the dashboard, under the website\'s settings.</p>');

const Params = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
const options = { schema: { hide: true, params: Params }, config: { access: { public: true as const } }, logLevel: 'warn' as const };

export async function unsubscribeRoutes(app: FastifyInstance): Promise<void> {
  // A one-click unsubscribe posts a small form; its content is not needed, only accepted.
  app.addContentTypeParser(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'], { parseAs: 'string', bodyLimit: 4096 }, (_request, _body, done) =>
    done(null, {}),
  );

  app.get<{ Params: { token: string } }>(UNSUBSCRIBE_PATH, options, async (request, reply) => {
    const delivery = await deliveryByDigest(app.db.kysely, digestSecret(request.params.token));
    if (!delivery) return notValid(reply);
    const what = `${KIND_NAMES[delivery.kind as MailKind] ?? 'mail'} for ${delivery.domain}`;
    return page(
      reply,
      200,
      'Unsubscribe',
      `<p>Stop the ${escapeHtml(what)}?</p>` +
        '<form method="post"><button type="submit" style="font-size:16px;padding:8px 16px;border-radius:6px;border:1px solid #1d4ed8;background:#1d4ed8;color:#ffffff;cursor:pointer;">Unsubscribe</button></form>',
    );
  });

  app.post<{ Params: { token: string } }>(UNSUBSCRIBE_PATH, options, async (request, reply) => {
    const delivery = await deliveryByDigest(app.db.kysely, digestSecret(request.params.token));
    if (!delivery) return notValid(reply);
    await setChoice(app.db.kysely, delivery.websiteId, delivery.accountId, delivery.kind as MailKind, false, new Date().toISOString());
    const what = `${KIND_NAMES[delivery.kind as MailKind] ?? 'mail'} for ${delivery.domain}`;
    return page(reply, 200, 'Unsubscribed', `<p>You will not receive the ${escapeHtml(what)} any more. You can turn it back on in the dashboard, under the website's settings.</p>`);
  });
}
