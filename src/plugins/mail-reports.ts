import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { describeFault, isDatabaseUnavailable } from '../db/faults.ts';
import { WakeLoop } from '../lib/wake-loop.ts';
import { type ReportDeps, runMailReports } from '../modules/reports/report-scheduler.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** What the report scheduler reads and writes with (src/modules/reports); tests run a pass with their own `now`. */
    mailReports: ReportDeps;
  }
}

/** How often a pass looks for reports and spikes due (each is queued once whatever the number of passes). */
export const MAIL_REPORTS_POLL_MS = 60_000;

/**
 * Reports by mail and the traffic-spike alert: with SMTP configured and MAIL_REPORTS on, a pass
 * runs when the server is ready and every minute after, one at a time, and stops before the
 * database closes. The scheduling is rows (mail_report_deliveries, mail_spike_checks), not timers:
 * a cron library would fire at instants kept in memory and miss the ones that fell while the
 * server was down; a pass instead asks which period has ended and was not mailed.
 */
async function mailReports(app: FastifyInstance): Promise<void> {
  const log = app.log.child({ component: 'mail-reports' });
  const deps: ReportDeps = {
    db: app.db.kysely,
    stats: { db: app.db.reads, store: app.eventStore, publicUrl: app.config.publicUrl },
    keyring: app.keyring,
    publicUrl: app.config.publicUrl,
    settings: app.config.mailReports,
    log,
  };
  app.decorate('mailReports', deps);
  const outbox = app.mailOutbox;
  if (!outbox || !app.config.mailReports.enabled) return;

  let databaseDown = false;
  const loop = new WakeLoop(async () => {
    try {
      const queued = await runMailReports(deps, new Date());
      if (queued > 0) outbox.poke();
      databaseDown = false;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) log.error({ fault: describeFault(error) }, 'reports by mail: the pass failed');
      else if (!databaseDown) {
        databaseDown = true;
        log.warn({ fault: describeFault(error) }, 'reports by mail: database unavailable; retrying at every pass');
      }
    }
  }, MAIL_REPORTS_POLL_MS);

  app.addHook('onReady', async () => loop.start());
  app.addHook('preClose', async () => {
    loop.halt();
    await loop.idle();
  });
}

export default fp(mailReports, { name: 'mail-reports', dependencies: ['database', 'keyring', 'mail', 'event-store'] });
