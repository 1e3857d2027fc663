import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { describeFault } from '../db/faults.ts';
import { BackgroundTasks } from '../lib/background-tasks.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Work a request starts and does not wait for (a password-reset link); closing waits for it. */
    background: BackgroundTasks;
  }
}

/**
 * Closing waits for the tasks after the last request is answered (onClose, so no request can
 * start another) and before the database closes (onClose hooks run in reverse order).
 */
async function background(app: FastifyInstance): Promise<void> {
  const log = app.log.child({ component: 'background' });
  // The fault's kind and message, as the error handler logs a database fault: no stack, no values.
  const tasks = new BackgroundTasks((error, name) => log.error({ task: name, fault: describeFault(error) }, 'background task failed'));
  app.decorate('background', tasks);
  app.addHook('onClose', async () => tasks.drain());
}

export default fp(background, { name: 'background', dependencies: ['database'] });
