import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createMailer } from '../mail/mailer.ts';
import { OutboxWorker } from '../mail/outbox-worker.ts';
import { isGoal } from '../modules/events/event.types.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The e-mail worker (alerts, invitations, password resets); null when SMTP_URL is unset (alert deliveries are then recorded as skipped). */
    mailOutbox: OutboxWorker | null;
  }
}

/**
 * Sends queued alert e-mail when SMTP is configured: starts on ready (sending whatever an earlier
 * process left queued), polls every second, is poked right after each commit that held a goal
 * event, and stops before the database closes.
 */
async function mail(app: FastifyInstance): Promise<void> {
  const { smtpUrl, mailFrom } = app.config;
  if (!smtpUrl) {
    app.decorate('mailOutbox', null);
    return;
  }
  const mailer = createMailer(smtpUrl, mailFrom);
  const log = app.log.child({ component: 'mail' });
  const worker = new OutboxWorker(app.db.kysely, mailer, log, {}, app.keyring);
  app.decorate('mailOutbox', worker);

  // Listeners run after the commit, so the queued rows are visible to the worker.
  app.events.onCommitted((recorded) => {
    if (recorded.some(isGoal)) worker.poke();
  });

  app.addHook('onReady', async () => {
    worker.start();
    log.info({ server: mailer.describe() }, 'e-mail delivery enabled (alerts, invitations, password resets)');
  });
  app.addHook('preClose', async () => {
    await worker.stop();
    mailer.close();
  });
}

export default fp(mail, { name: 'mail', dependencies: ['database', 'event-writer', 'keyring'] });
