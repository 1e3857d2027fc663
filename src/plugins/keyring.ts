import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { type Keyring, loadKeyring } from '../crypto/keyring.ts';
import { assertStoredCredentialsOpen } from '../modules/integrations/credentials.ts';

declare module 'fastify' {
  interface FastifyInstance {
    keyring: Keyring;
  }
}

/** Loads the credential keys and refuses to start when stored credentials do not open with them. */
async function keyring(app: FastifyInstance): Promise<void> {
  const loaded = loadKeyring(app.config, app.db.sqlitePath, app.db.engine);
  await assertStoredCredentialsOpen(app.db.kysely, loaded);
  app.decorate('keyring', loaded);
}

export default fp(keyring, { name: 'keyring', dependencies: ['database'] });
