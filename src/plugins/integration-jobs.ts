import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createAdapters, hasApi } from '../modules/integrations/adapters/index.ts';
import { IntegrationJobWorker } from '../modules/integrations/integration-job-worker.ts';
import type { Provider } from '../modules/integrations/providers.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Runs the integration jobs (credential checks, payment history imports); null with INTEGRATION_JOBS=off. */
    integrationJobs: IntegrationJobWorker | null;
  }
}

/** The job worker beside the server: started once it is ready, stopped (its job handed back) when it closes. */
async function integrationJobs(app: FastifyInstance): Promise<void> {
  const { enabled, ...options } = app.config.integrationJobs;
  if (!enabled) {
    app.decorate('integrationJobs', null);
    return;
  }
  const adapters = createAdapters(app.config.providerApiUrls);
  const worker = new IntegrationJobWorker(
    {
      db: app.db.kysely,
      keyring: app.keyring,
      adapterOf: (provider) => {
        const adapter = adapters[provider as Provider];
        return adapter && hasApi(adapter) ? adapter : null;
      },
      log: app.log,
      onPage: (provider, payments) => app.metrics.integrationPaymentsImported.inc({ provider }, payments),
      paymentFold: app.rollups,
    },
    options,
  );
  app.decorate('integrationJobs', worker);
  app.addHook('onReady', async () => worker.start());
  app.addHook('onClose', async () => worker.stop());
}

export default fp(integrationJobs, { name: 'integration-jobs', dependencies: ['database', 'keyring', 'metrics'] });
