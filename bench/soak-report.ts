import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Group, Operation } from './soak-mix.ts';
import { type ServerReading, readSlotWindow } from './soak-metrics.ts';

// The soak's printed tables (the mix, one table per 10-s window, the summary against the issue's
// targets) and its JSON file.

/** Issue 38's targets, and how the summary reads "as fast" and "kept its schedule". */
export const SOAK_TARGETS = {
  routeP99Ms: 50,
  loopDelayP99Ms: 10,
  rssGrowthMb: 10,
  /** RSS is judged from this point on... */
  rssSettleSeconds: 300,
  /** ...so a run needs this long for a verdict (a minute after it, averaged). */
  rssMinimumSeconds: 360,
  /** The last window's reads (p50 and p99) may be this much slower than the second's, or READ_SLACK_MS. */
  readSlowdown: 1.25,
  readSlackMs: 2,
  sendLagP99Ms: 5,
};

export interface Latencies {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface RouteWindow extends Latencies {
  name: string;
  route: string;
  group: Group;
  /** Answers other than 2xx, by status, and requests with no answer (timeout, connection error) or a dropped event. */
  failures: Record<string, number>;
}

export interface WindowResult {
  index: number;
  fromSeconds: number;
  toSeconds: number;
  sent: number;
  sendLagMs: { p50: number; p99: number; max: number };
  client: { cpuPercent: number; loopDelayP99Ms: number };
  server: ServerReading | null;
  serverError?: string;
  routes: RouteWindow[];
  /** The website API's reads together: the latencies of those answered 2xx, and how many were not. */
  reads: Latencies & { failed: number };
}

export interface SoakResult {
  engine: string;
  date: string;
  node: string;
  command: string;
  settings: { rate: number; seconds: number; seedEvents: number; windowSeconds: number };
  mix: { name: string; group: Group; route: string; weight: number }[];
  targets: typeof SOAK_TARGETS;
  /** Set-up: the synthetic events written before the run, and the website's events counted after it. */
  events: { seeded: number; atEnd: number | null };
  /** The server's reading just before the first window. */
  before: ServerReading | null;
  /** The whole run's send lag (how late the client sent requests against their schedule). */
  sendLagMs: { p50: number; p99: number; max: number };
  stoppedEarly: boolean;
  windows: WindowResult[];
}

const MB = 1024 * 1024;
const ms = (value: number) => value.toFixed(1);
const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
const verdict = (ok: boolean) => (ok ? 'MET' : 'MISSED');
const count = (value: number) => value.toLocaleString('en-US');

export function printMix(mix: Operation[], rate: number): void {
  const total = mix.reduce((sum, operation) => sum + operation.weight, 0);
  console.log(`mix (per ${total} requests; at ${rate} requests/s):`);
  console.log(`  ${'operation'.padEnd(20)}${'group'.padEnd(14)}${'share'.padStart(6)}${'req/s'.padStart(8)}  route`);
  for (const operation of mix) {
    const perSecond = ((operation.weight / total) * rate).toFixed(1);
    console.log(`  ${operation.name.padEnd(20)}${operation.group.padEnd(14)}${String(operation.weight).padStart(6)}${perSecond.padStart(8)}  ${operation.route}`);
  }
  console.log(`latency: from each request's scheduled send time to the end of its answer, every answer counted (failures too); '>' marks a p99 over ${SOAK_TARGETS.routeP99Ms} ms`);
}

function failureText(failures: Record<string, number>): string {
  return Object.entries(failures)
    .map(([outcome, times]) => `${outcome} x${times}`)
    .join(', ');
}

/** `previous`: the reading of the window before (null for the first: since the server started). */
export function printWindow(engine: string, windows: number, result: WindowResult, previous: ServerReading | null): void {
  const { server, client, sendLagMs } = result;
  console.log('');
  console.log(
    `${engine}, window ${result.index + 1} of ${windows} (${result.fromSeconds}-${result.toSeconds} s): ${count(result.sent)} sent, ` +
      `send lag p99 ${ms(sendLagMs.p99)} ms (max ${ms(sendLagMs.max)}), client CPU ${client.cpuPercent.toFixed(0)} %, client loop p99 ${ms(client.loopDelayP99Ms)} ms`,
  );
  if (server) {
    const loop = server.loopDelayMs;
    const pool = server.poolWaiting === null ? '' : `, pool waiting ${server.poolWaiting}`;
    console.log(
      `  server: loop delay p50 ${ms(loop.p50)} / p99 ${ms(loop.p99)} / max ${ms(loop.max)} ms; RSS ${mb(server.rssBytes)}, heap ${mb(server.heapUsedBytes)} ` +
        `of ${mb(server.heapTotalBytes)}; events accepted ${count(server.eventsAccepted)}, rollup backlog ${server.rollupBacklog}${pool}`,
    );
    const slots = readSlotWindow(server, previous);
    if (slots.length > 0) {
      const cells = slots.map((slot) => `${slot.route.replace('/api/v1/analytics/', '')} ${ms(slot.serviceMs)}/${ms(slot.waitMs)} (${slot.count})`);
      console.log(`  reads' mean ms in a slot / waiting for one (served): ${cells.join(', ')}`);
    }
  } else {
    console.log(`  server: no reading (${result.serverError})`);
  }
  console.log(`  ${'operation'.padEnd(20)}${'count'.padStart(6)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'max ms'.padStart(9)}  failures`);
  for (const route of result.routes) {
    const over = route.p99Ms > SOAK_TARGETS.routeP99Ms ? ' >' : '  ';
    const cells = [route.name.padEnd(20), String(route.count).padStart(6), ms(route.p50Ms).padStart(9), (ms(route.p99Ms) + over).padStart(11), ms(route.maxMs).padStart(7)];
    console.log(`  ${cells.join('')}  ${failureText(route.failures)}`);
  }
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

/** The summary's lines; answers whether every target was met. */
export function printSummary(result: SoakResult): boolean {
  const { windows, settings, engine } = result;
  const sent = windows.reduce((sum, window) => sum + window.sent, 0);
  const failures: Record<string, number> = {};
  for (const route of windows.flatMap((window) => window.routes)) {
    for (const [outcome, times] of Object.entries(route.failures)) failures[`${route.name}: ${outcome}`] = (failures[`${route.name}: ${outcome}`] ?? 0) + times;
  }
  const failed = Object.values(failures).reduce((sum, times) => sum + times, 0);
  const ran = windows.length > 0 ? windows.at(-1)!.toSeconds : 0;
  console.log('');
  console.log(`${engine}: summary of ${ran} s at ${settings.rate} requests/s${result.stoppedEarly ? ' (stopped early)' : ''}: ${count(sent)} requests, ${count(failed)} failed`);
  console.log(`command: ${result.command}`);

  const overs = windows.flatMap((window) => window.routes.filter((route) => route.p99Ms > SOAK_TARGETS.routeP99Ms).map((route) => ({ window, route })));
  const worst = windows
    .flatMap((window) => window.routes.map((route) => ({ window, route })))
    .reduce<{ window: WindowResult; route: RouteWindow } | null>((best, item) => (best === null || item.route.p99Ms > best.route.p99Ms ? item : best), null);
  const worstText = worst ? `worst: ${worst.route.name} ${ms(worst.route.p99Ms)} ms in window ${worst.window.index + 1}` : 'no requests';
  const routeOk = overs.length === 0 && worst !== null;
  const overWindows = [...new Set(overs.map((item) => item.window.index + 1))];
  const overText = routeOk ? '' : `; ${overs.length} route-windows over, in windows ${overWindows.slice(0, 20).join(', ')}${overWindows.length > 20 ? ', ...' : ''}`;
  console.log(`  every route's p99 <= ${SOAK_TARGETS.routeP99Ms} ms in every 10-s window, the first included: ${verdict(routeOk)} (${worstText}${overText})`);

  const readings = windows.filter((window) => window.server !== null);
  const loopWorst = readings.reduce<WindowResult | null>((best, window) => (best === null || window.server!.loopDelayMs.p99 > best.server!.loopDelayMs.p99 ? window : best), null);
  const promWorst = Math.max(0, ...readings.map((window) => window.server!.promLoopDelayMs.p99));
  const unread = windows.length - readings.length;
  const loopOk = loopWorst !== null && loopWorst.server!.loopDelayMs.p99 <= SOAK_TARGETS.loopDelayP99Ms && unread === 0;
  const loopText = loopWorst ? `worst p99 ${ms(loopWorst.server!.loopDelayMs.p99)} ms in window ${loopWorst.index + 1}; prom-client's 10-ms sampling says ${ms(promWorst)} ms` : 'no reading';
  console.log(`  event-loop delay p99 <= ${SOAK_TARGETS.loopDelayP99Ms} ms in every window: ${verdict(loopOk)} (${loopText}${unread ? `; ${unread} windows unread` : ''})`);

  let rssOk = true;
  if (ran < SOAK_TARGETS.rssMinimumSeconds) {
    console.log(`  RSS growth after the first ${SOAK_TARGETS.rssSettleSeconds / 60} minutes <= ${SOAK_TARGETS.rssGrowthMb} MB: n/a (the run is shorter than ${SOAK_TARGETS.rssMinimumSeconds / 60} minutes)`);
  } else {
    const settled = readings.filter((window) => window.toSeconds > SOAK_TARGETS.rssSettleSeconds && window.toSeconds <= SOAK_TARGETS.rssSettleSeconds + 60);
    const last = readings.filter((window) => window.toSeconds > ran - 60);
    const before = mean(settled.map((window) => window.server!.rssBytes));
    const after = mean(last.map((window) => window.server!.rssBytes));
    const peak = Math.max(...readings.filter((window) => window.toSeconds > SOAK_TARGETS.rssSettleSeconds).map((window) => window.server!.rssBytes));
    const growth = (after - before) / MB;
    rssOk = settled.length > 0 && last.length > 0 && growth <= SOAK_TARGETS.rssGrowthMb;
    console.log(
      `  RSS growth after the first ${SOAK_TARGETS.rssSettleSeconds / 60} minutes <= ${SOAK_TARGETS.rssGrowthMb} MB: ${verdict(rssOk)} ` +
        `(${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MB: ${mb(before)} over minute 6, ${mb(after)} over the last minute; peak ${mb(peak)})`,
    );
  }

  let readOk = false;
  const second = windows[1];
  const lastWindow = windows.at(-1);
  if (!second || !lastWindow || lastWindow === second) {
    console.log("  the website API's reads in the last window as fast as in the second: n/a (fewer than three windows)");
    readOk = true;
  } else {
    const within = (now: number, then: number) => now <= Math.max(then * SOAK_TARGETS.readSlowdown, then + SOAK_TARGETS.readSlackMs);
    const [then, now] = [second.reads, lastWindow.reads];
    readOk = then.count > 0 && now.count > 0 && then.failed === 0 && now.failed === 0 && within(now.p50Ms, then.p50Ms) && within(now.p99Ms, then.p99Ms);
    const slack = `none failed, p50 and p99 of the 2xx within ${Math.round((SOAK_TARGETS.readSlowdown - 1) * 100)} % or ${SOAK_TARGETS.readSlackMs} ms`;
    const failedText = then.failed + now.failed > 0 ? `; failed ${then.failed} -> ${now.failed}` : '';
    console.log(
      `  the website API's reads in the last window as fast as in the second (${slack}): ${verdict(readOk)} ` +
        `(p50 ${ms(then.p50Ms)} -> ${ms(now.p50Ms)} ms, p99 ${ms(then.p99Ms)} -> ${ms(now.p99Ms)} ms${failedText})`,
    );
    for (const route of lastWindow.routes.filter((r) => r.group === 'website read')) {
      const before = second.routes.find((r) => r.name === route.name);
      if (before) console.log(`    ${route.name.padEnd(20)} p50 ${ms(before.p50Ms)} -> ${ms(route.p50Ms)} ms, p99 ${ms(before.p99Ms)} -> ${ms(route.p99Ms)} ms (every answer)`);
    }
  }

  console.log(`  no failed requests: ${verdict(failed === 0)}${failed === 0 ? '' : ` (${failureText(failures)})`}`);
  const lag = result.sendLagMs;
  const kept = lag.p99 <= SOAK_TARGETS.sendLagP99Ms;
  console.log(
    `  the client kept its schedule (send lag p99 <= ${SOAK_TARGETS.sendLagP99Ms} ms): ${kept ? 'yes' : 'NO, it fell behind: the latencies above include its delay'} ` +
      `(p50 ${ms(lag.p50)}, p99 ${ms(lag.p99)}, max ${ms(lag.max)} ms; latencies count from each request's scheduled time)`,
  );
  const accepted = (readings.at(-1)?.server?.eventsAccepted ?? 0) - (result.before?.eventsAccepted ?? 0);
  const atEnd = result.events.atEnd === null ? 'not counted' : count(result.events.atEnd);
  console.log(`  events: ${count(result.events.seeded)} seeded before the run, ${count(accepted)} accepted during it (browser, server-side goals, payments); the website's events at the end: ${atEnd}`);
  return routeOk && loopOk && rssOk && readOk && failed === 0;
}

export function writeSoak(file: string, result: SoakResult): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
}
