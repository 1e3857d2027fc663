// One website: its name, the "Analytics | Settings" tabs, and the section asked for. Both
// sections are separate chunks, loaded on first use.
import { createContext } from 'preact';
import type { JSX } from 'preact';
import { useContext } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import { ErrorMessage, Loading, Tabs, useAsync } from '../components/index.ts';
import { lazyComponent } from '../lazy.tsx';
import { useLocation } from '../router.tsx';
import { useTitle } from '../session.tsx';
import type { Website } from '../types.ts';
import { NotFound } from './NotFound.tsx';

const AnalyticsPage = lazyComponent<{ websiteId: string; role?: Website['role'] }>(() =>
  import('../analytics/AnalyticsPage.tsx').then((module) => module.AnalyticsPage),
);
const SettingsPage = lazyComponent<{ website: Website; onChange: (website: Website) => void }>(() =>
  import('./settings/SettingsPage.tsx').then((module) => module.SettingsPage),
);

export interface WebsiteState {
  website: Website;
  /** After a write that answered the website (settings saved). */
  setWebsite: (website: Website) => void;
}

const WebsiteContext = createContext<WebsiteState | null>(null);

/** The website of the page being shown (its settings and the caller's `role`), or null outside one. */
export function useWebsite(): WebsiteState | null {
  return useContext(WebsiteContext);
}

export function WebsiteLayout({ websiteId, section }: { websiteId: string; section: 'analytics' | 'settings' }): JSX.Element {
  const state = useAsync(() => api.get<Website>(`/api/v1/admin/websites/${encodeURIComponent(websiteId)}`), [websiteId]);
  const { query } = useLocation();
  const website = state.data;
  useTitle(website ? `${website.name || website.domain}${section === 'settings' ? ' settings' : ''}` : 'Website');

  if (state.error instanceof ApiError && (state.error.status === 404 || state.error.status === 400)) return <NotFound what="website" />;
  if (state.error) return <ErrorMessage error={state.error} onRetry={state.reload} />;
  if (!website) return <Loading label="Loading the website…" />;

  const base = `/websites/${website.id}`;
  // The analytics view (period, filters) survives a visit to the settings and back.
  const analyticsQuery = section === 'analytics' ? query.toString() : '';
  return (
    <WebsiteContext.Provider value={{ website, setWebsite: state.setData }}>
      <div class="page-head website-head">
        <div>
          <h1>{website.name || website.domain}</h1>
          {website.name && website.name !== website.domain && <p class="muted">{website.domain}</p>}
        </div>
        <Tabs
          label="Website sections"
          items={[
            { href: analyticsQuery ? `${base}?${analyticsQuery}` : base, label: 'Analytics', current: section === 'analytics' },
            { href: `${base}/settings`, label: 'Settings', current: section === 'settings' },
          ]}
        />
      </div>
      {section === 'analytics' ? <AnalyticsPage websiteId={website.id} role={website.role} /> : <SettingsPage website={website} onChange={state.setData} />}
    </WebsiteContext.Provider>
  );
}
