// The live view: who is on the website now (GET /api/v1/analytics/realtime/map, the last 10
// minutes) and what they just did, in a native <dialog> opened from the current-visitors count.
// Read at once and every 10 seconds while open and the tab is visible; a separate chunk, loaded
// on first open, so the analytics page's JavaScript stays within its budget.
import { useEffect, useRef, useState } from 'preact/hooks';
import { request } from '../api.ts';
import { servedFlag } from './breakdown-config.ts';
import { capitalise, countryName, formatMoney, formatNumber } from './format.ts';
import { Swatch, goalTitle, useGoals } from './goal-display.tsx';
import { useModal } from '../components/useModal.ts';

const EVERY_MS = 10_000;
/** The most recent events and payments shown, newest first. */
const RECENT = 15;

interface LiveVisitor {
  visitorId: string;
  location: { city: string | null; region: string | null; countryCode: string | null };
  system: { browser: { name: string | null }; os: { name: string | null }; device: { type: string | null } };
  currentUrl: string | null;
  referrer: string | null;
  sessionStartTime: string | null;
  params: Record<string, string | null>;
  isCustomer: boolean;
  customerName: string | null;
  profileData: { displayName: string | null };
}

interface LiveEvent {
  id: string;
  type: string;
  name: string | null;
  visitorId: string;
  timestamp: string;
  path: string | null;
  countryCode: string | null;
}

interface LivePayment {
  id: string;
  timestamp: string;
  amount: number;
  currency: string;
  customerName: string | null;
  renewal: boolean;
}

interface LiveMap {
  count: number;
  visitors: LiveVisitor[];
  recentEvents: LiveEvent[];
  recentPayments: LivePayment[];
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** "now", "25 seconds ago", "3 minutes ago" (the browser's language). */
function ago(iso: string | null | undefined, now: number): string {
  const at = iso ? Date.parse(iso) : NaN;
  if (!Number.isFinite(at)) return '–';
  const seconds = Math.round((at - now) / 1000);
  if (seconds > -10) return relative.format(0, 'second');
  if (seconds > -60) return relative.format(seconds, 'second');
  return relative.format(Math.round(seconds / 60), 'minute');
}

/** The path and query of a page URL ("https://x.test/pricing?a=1" -> "/pricing?a=1"). */
function pageOf(url: string | null): string {
  if (!url) return '(unknown page)';
  try {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  } catch {
    return url;
  }
}

function Country({ code, city }: { code: string | null; city?: string | null }) {
  if (!code) return <span class="an-muted">Unknown</span>;
  const name = countryName(code);
  const flag = servedFlag(code);
  return (
    <span class="an-live-place" title={code}>
      {flag && <img class="an-flag" src={flag} alt="" width={16} height={12} />}
      {city ? `${city}, ${name}` : name}
    </span>
  );
}

type Activity = { at: string; key: string; what: 'event'; event: LiveEvent } | { at: string; key: string; what: 'payment'; payment: LivePayment };

/** Events and payments together, newest first. */
function activityOf(map: LiveMap): Activity[] {
  const rows: Activity[] = [
    ...map.recentEvents.map((event) => ({ at: event.timestamp, key: `e${event.id}`, what: 'event' as const, event })),
    ...map.recentPayments.map((payment) => ({ at: payment.timestamp, key: `p${payment.id}`, what: 'payment' as const, payment })),
  ];
  return rows.sort((a, b) => Date.parse(b.at) - Date.parse(a.at)).slice(0, RECENT);
}

export function LiveDialog({ websiteId, filtered, onClose }: { websiteId: string; filtered: boolean; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const goals = useGoals();
  const [map, setMap] = useState<LiveMap | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const [now, setNow] = useState(() => Date.now());

  useModal(dialog, onClose);

  // Polling: at once, then every 10 s while the tab is visible; at once again when it comes back.
  useEffect(() => {
    let alive = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    async function read() {
      clearTimeout(timer);
      try {
        // The map is one object in `data`, not a list.
        const answer = (await request('GET', '/api/v1/analytics/realtime/map', { query: { websiteId } })) as unknown as { data: LiveMap };
        if (!alive) return;
        setMap(answer.data);
        setFailed(null);
      } catch (error) {
        if (alive) setFailed(error instanceof Error ? error.message : String(error));
      }
      if (!alive) return;
      setNow(Date.now());
      if (document.visibilityState === 'visible') timer = setTimeout(read, EVERY_MS);
    }
    const onVisibility = () => {
      if (document.visibilityState === 'visible') void read();
      else clearTimeout(timer);
    };
    void read();
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      alive = false;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [websiteId]);

  // When each visitor was last seen: their newest recent event, else the start of their session.
  const lastSeen = new Map<string, string>();
  for (const event of map?.recentEvents ?? []) if (!lastSeen.has(event.visitorId)) lastSeen.set(event.visitorId, event.timestamp);
  const count = map?.count ?? 0;
  const activity = map ? activityOf(map) : [];

  return (
    <dialog ref={dialog} class="an-dialog an-live-dialog" aria-labelledby="an-live-title" aria-describedby="an-live-hint">
      <div class="an-dialog-head">
        <h2 id="an-live-title" class="an-card-title">
          Live visitors
        </h2>
        <button type="button" class="an-button an-close" onClick={() => dialog.current?.close()}>
          Close
        </button>
      </div>
      <p id="an-live-hint" class="an-hint">
        Everyone with activity in the last 10 minutes, updated every 10 seconds.{filtered ? ' The filters do not apply here.' : ''}
      </p>
      <p class="an-live-count" role="status">
        {map ? `${formatNumber(count)} visitor${count === 1 ? '' : 's'} in the last 10 minutes` : failed ? '' : 'Loading live visitors…'}
      </p>
      {failed && (
        <p class="an-error" role="alert">
          Could not load the live visitors: {failed}
        </p>
      )}
      {map && (
        <div class="an-dialog-body an-live-body">
          <section aria-labelledby="an-live-visitors">
            <h3 id="an-live-visitors" class="an-live-title">
              Visitors
            </h3>
            {map.visitors.length === 0 ? (
              <p class="an-empty">Nobody right now</p>
            ) : (
              <ul class="an-live-list">
                {map.visitors.map((visitor) => {
                  const page = pageOf(visitor.currentUrl);
                  const device = [visitor.system.device.type && capitalise(visitor.system.device.type), visitor.system.browser.name, visitor.system.os.name]
                    .filter(Boolean)
                    .join(' · ');
                  const who = visitor.profileData.displayName || (visitor.isCustomer ? visitor.customerName || 'Customer' : null);
                  const seen = lastSeen.get(visitor.visitorId);
                  return (
                    <li key={visitor.visitorId} class="an-live-visitor">
                      <p class="an-live-page" title={visitor.currentUrl ?? undefined}>
                        <span class="an-sr">Page: </span>
                        {page}
                        {who && <span class="an-live-who"> · {who}</span>}
                      </p>
                      <dl class="an-live-facts">
                        <div>
                          <dt>Source</dt>
                          <dd>{visitor.referrer || visitor.params.utm_source || 'Direct / none'}</dd>
                        </div>
                        <div>
                          <dt>Country</dt>
                          <dd>
                            <Country code={visitor.location.countryCode} city={visitor.location.city} />
                          </dd>
                        </div>
                        <div>
                          <dt>Device</dt>
                          <dd>{device || 'Unknown'}</dd>
                        </div>
                        <div>
                          <dt>{seen ? 'Last seen' : 'Arrived'}</dt>
                          <dd>{ago(seen ?? visitor.sessionStartTime, now)}</dd>
                        </div>
                      </dl>
                    </li>
                  );
                })}
              </ul>
            )}
          </section>
          <section aria-labelledby="an-live-recent">
            <h3 id="an-live-recent" class="an-live-title">
              Recent activity
            </h3>
            {activity.length === 0 ? (
              <p class="an-empty">No events in the last 10 minutes</p>
            ) : (
              <ol class="an-live-events">
                {activity.map((row) => (
                  <li key={row.key}>
                    <span class="an-live-what">{row.what === 'event' ? <EventText event={row.event} goals={goals} /> : <PaymentText payment={row.payment} />}</span>
                    {row.what === 'event' && <Country code={row.event.countryCode} />}
                    <span class="an-muted">{ago(row.at, now)}</span>
                  </li>
                ))}
              </ol>
            )}
          </section>
        </div>
      )}
    </dialog>
  );
}

function EventText({ event, goals }: { event: LiveEvent; goals: ReturnType<typeof useGoals> }) {
  if (event.type === 'pageview') return <>Viewed {event.path ?? 'a page'}</>;
  if (event.type === 'custom' && event.name) {
    const look = goals.look(event.name);
    return (
      <>
        <Swatch color={look?.color} />
        Goal <strong title={goalTitle(event.name, look)}>{goals.label(event.name)}</strong>
      </>
    );
  }
  if (event.type === 'external_link') return <>Left through a link</>;
  return <>{capitalise(event.type.replaceAll('_', ' '))}</>;
}

function PaymentText({ payment }: { payment: LivePayment }) {
  return (
    <>
      {payment.renewal ? 'Renewal' : 'Payment'} <strong>{formatMoney(payment.amount, payment.currency)}</strong>
      {payment.customerName ? ` from ${payment.customerName}` : ''}
    </>
  );
}
