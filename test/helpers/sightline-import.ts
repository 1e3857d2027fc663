import { type TestApp, settleRollups } from './app.ts';

// Uploading Sightline's own export to POST .../imports and waiting for its job (and, after a
// deletion, for the build of the derived tables it asks for).

export async function uploadExport(t: TestApp, token: string, websiteId: string, body: Buffer | string, contentType: string, label?: string) {
  const response = await t.app.inject({
    method: 'POST',
    url: `/api/v1/admin/websites/${websiteId}/imports`,
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    query: label ? { label } : {},
    payload: body,
  });
  let parsed: any = null;
  try {
    parsed = response.json();
  } catch {
    parsed = null;
  }
  return { status: response.statusCode, body: parsed, raw: response.body };
}

export async function runImports(t: TestApp): Promise<void> {
  t.app.importJobs!.wake();
  await t.app.importJobs!.idle();
  await settleRollups(t)();
  await t.app.derivedDataWorker.settle();
}
