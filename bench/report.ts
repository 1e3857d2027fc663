import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { LoadResult } from './load.ts';

// The printed table and the JSON file.

export interface EngineResult {
  engine: string;
  path: string;
  sightline: LoadResult;
  bare: LoadResult;
  /** Sightline req/s divided by bare req/s. */
  ratio: number;
}

export interface Report {
  date: string;
  node: string;
  command: string;
  settings: { durationSeconds: number; warmupSeconds: number; connections: number };
  engines: EngineResult[];
  skipped: { engine: string; reason: string }[];
}

const COLUMNS = ['engine', 'target', 'req/s', 'p50 ms', 'p99 ms', 'Sightline/bare', 'failed', 'server CPU us/req'];
const WIDTHS = [9, 10, 10, 8, 8, 15, 7, 18];

function row(cells: string[]): string {
  return cells.map((cell, i) => (i < 2 ? cell.padEnd(WIDTHS[i]!) : cell.padStart(WIDTHS[i]!))).join('  ');
}

function line(engine: string, target: string, result: LoadResult, ratio: string): string {
  const failed = String(result.non2xx + result.errors);
  const cpu = result.serverCpuUsPerRequest === null ? 'n/a' : result.serverCpuUsPerRequest.toFixed(1);
  return row([engine, target, result.reqPerSec.toFixed(0), result.p50Ms.toFixed(2), result.p99Ms.toFixed(2), ratio, failed, cpu]);
}

export function printReport(report: Report): void {
  const { durationSeconds, warmupSeconds, connections } = report.settings;
  console.log('');
  console.log(`command: ${report.command}`);
  console.log(`node ${report.node}; autocannon ${connections} connections, ${durationSeconds} s after a ${warmupSeconds} s warm-up`);
  if (report.engines[0]) console.log(`request: GET ${report.engines[0].path} (authenticated, full-access token)`);
  console.log('');
  console.log(row(COLUMNS));
  for (const result of report.engines) {
    console.log(line(result.engine, 'sightline', result.sightline, `${(result.ratio * 100).toFixed(1)} %`));
    console.log(line(result.engine, 'bare', result.bare, ''));
  }
  for (const { engine, reason } of report.skipped) console.log(`${engine}: skipped (${reason})`);
}

export function writeReport(file: string, report: Report): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
}
