// Integrations: the payment providers that send revenue to this website's reports, each in its
// card (integrations/ProviderCard.tsx). While a credential's check or a history import is under
// way, the statuses are asked again every few seconds, for a while.
import type { JSX } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { api } from '../../api.ts';
import { Card, Loaded, useAsync } from '../../components/index.ts';
import { PROVIDERS, type Statuses, isPending, statusOf } from './integrations/providers.ts';
import { ProviderCard } from './integrations/ProviderCard.tsx';
import type { SectionProps } from './section-props.ts';

const POLL_MS = 5000;
/** Five minutes of asking, then the reader reloads (a job that is off never ends). */
const MAX_POLLS = 60;

export function IntegrationsSection({ website, editable }: SectionProps): JSX.Element {
  const base = `/api/v1/admin/websites/${website.id}/integrations`;
  const state = useAsync(() => api.get<Statuses>(base), [base]);
  const polls = useRef(0);
  const { data, reload } = state;

  useEffect(() => {
    if (!data || !PROVIDERS.some((provider) => isPending(statusOf(data, provider.id)))) {
      polls.current = 0;
      return undefined;
    }
    if (polls.current >= MAX_POLLS) return undefined;
    const timer = setTimeout(() => {
      polls.current += 1;
      reload();
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [data]);

  return (
    <Card title="Integrations">
      <p class="muted">
        Payment providers send revenue to this website's reports. Credentials and signing secrets are write-only: stored encrypted, never shown again.
      </p>
      <Loaded state={state}>
        {(statuses) => (
          <ul class="provider-grid">
            {PROVIDERS.map((provider) => (
              <ProviderCard key={provider.id} provider={provider} status={statusOf(statuses, provider.id)} base={base} editable={editable} onChanged={reload} />
            ))}
          </ul>
        )}
      </Loaded>
    </Card>
  );
}
