// Where "All time" starts: the earlier of the first day with visitors and the first note's day,
// so the chart shows every note (a note may well come before the first visitor: "snippet
// installed"). One monthly series over the years (read from the day rollups, so cheap) finds the
// first month with visitors, then that month by day finds the day.
import { api, request } from '../api.ts';
import { addDays, dayIn } from './range.ts';

/** How far back "All time" looks for the first month with visitors. */
const ALL_TIME_YEARS = 20;

interface Bucket {
  name: string;
  visitors: number;
}

async function firstBucketWithVisitors(websiteId: string, interval: 'month' | 'day', startAt: string, endAt: string): Promise<string | null> {
  const answer = await request<Bucket>('GET', '/api/v1/analytics/timeseries', { query: { websiteId, fields: 'visitors', interval, startAt, endAt } });
  return answer.data.find((bucket) => bucket.visitors > 0)?.name ?? null;
}

/** The first day (YYYY-MM-DD, in `timeZone`) of "All time"; `today` when nothing came before. */
export async function firstDayOfAllTime(websiteId: string, timeZone: string, today: string): Promise<string> {
  const probeStart = `${Number(today.slice(0, 4)) - ALL_TIME_YEARS}-01-01`;
  const [month, notes] = await Promise.all([
    firstBucketWithVisitors(websiteId, 'month', probeStart, today),
    // Notes are a nicety here: a reader who may not list them still gets the first visitor's day.
    api.list<{ timestamp: string }>(`/api/v1/admin/websites/${encodeURIComponent(websiteId)}/notes`, { order: 'asc', limit: 1 }).catch(() => []),
  ]);
  let firstVisit: string | null = null;
  if (month) {
    const start = `${month}-01`;
    const nextMonth = addDays(start, 31).slice(0, 7);
    const end = addDays(`${nextMonth}-01`, -1);
    firstVisit = (await firstBucketWithVisitors(websiteId, 'day', start, end < today ? end : today)) ?? start;
  }
  const firstNote = notes[0] ? dayIn(timeZone, notes[0].timestamp) : null;
  const days = [firstVisit, firstNote].filter((day): day is string => day !== null && day <= today).sort();
  return days[0] ?? today;
}
