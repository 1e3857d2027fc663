import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { EventWriter } from '../modules/events/event-writer.ts';

declare module 'fastify' {
  interface FastifyInstance {
    events: EventWriter;
  }
}

/** One writer per process, drained before the database closes. */
async function eventWriter(app: FastifyInstance): Promise<void> {
  const writer = new EventWriter(app.db.kysely, {
    alertCooldownSeconds: app.config.alertCooldownSeconds,
    mailEnabled: app.config.smtpUrl !== undefined,
    eventsInClickHouse: app.config.clickhouseUrl !== undefined,
  });
  app.decorate('events', writer);
  app.addHook('preClose', async () => writer.flush());
}

export default fp(eventWriter, { name: 'event-writer', dependencies: ['database'] });
