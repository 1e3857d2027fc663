// A website's settings, one section at a time (the section is kept in ?tab=). Sections and
// controls a role cannot use are left out: a viewer reads, a member edits, the owner also
// manages the team and may delete the website.
import type { JSX } from 'preact';
import { Tabs } from '../../components/index.ts';
import { useLocation } from '../../router.tsx';
import { type Website, canEdit } from '../../types.ts';
import { AlertsSection } from './AlertsSection.tsx';
import { ApiKeysSection } from './ApiKeysSection.tsx';
import { CurrencyRatesSection } from './CurrencyRatesSection.tsx';
import { DeleteSection } from './DeleteSection.tsx';
import { ExportSection } from './ExportSection.tsx';
import { FunnelsSection } from './FunnelsSection.tsx';
import { GeneralSection } from './GeneralSection.tsx';
import { GoalsSection } from './GoalsSection.tsx';
import { IntegrationsSection } from './IntegrationsSection.tsx';
import { MailReportsSection } from './MailReportsSection.tsx';
import { ImportsSection } from './ImportsSection.tsx';
import type { SectionProps } from './section-props.ts';
import { SharingSection } from './SharingSection.tsx';
import { TeamSection } from './TeamSection.tsx';

const SECTIONS: Array<{ id: string; label: string; ownerOnly?: boolean; render: (props: SectionProps) => JSX.Element }> = [
  // The exchange rates sit under the website's currency: its own form, after General's.
  {
    id: 'general',
    label: 'General',
    render: (props) => (
      <>
        <GeneralSection {...props} />
        <CurrencyRatesSection {...props} />
      </>
    ),
  },
  { id: 'keys', label: 'API keys', render: (props) => <ApiKeysSection {...props} /> },
  { id: 'goals', label: 'Goals', render: (props) => <GoalsSection {...props} /> },
  { id: 'funnels', label: 'Funnels', render: (props) => <FunnelsSection {...props} /> },
  { id: 'alerts', label: 'Alerts', render: (props) => <AlertsSection {...props} /> },
  { id: 'mail', label: 'Reports by mail', render: (props) => <MailReportsSection {...props} /> },
  { id: 'team', label: 'Team', render: (props) => <TeamSection {...props} /> },
  { id: 'sharing', label: 'Sharing', render: (props) => <SharingSection {...props} /> },
  { id: 'integrations', label: 'Integrations', render: (props) => <IntegrationsSection {...props} /> },
  { id: 'imports', label: 'Imports', render: (props) => <ImportsSection {...props} /> },
  { id: 'export', label: 'Export', ownerOnly: true, render: (props) => <ExportSection {...props} /> },
  { id: 'delete', label: 'Delete website', ownerOnly: true, render: (props) => <DeleteSection {...props} /> },
];

export function SettingsPage({ website, onChange }: { website: Website; onChange: (website: Website) => void }): JSX.Element {
  const { path, query } = useLocation();
  const sections = SECTIONS.filter((section) => !section.ownerOnly || website.role === 'owner');
  const wanted = query.get('tab');
  const current = sections.find((section) => section.id === wanted) ?? sections[0]!;
  const editable = canEdit(website.role);
  return (
    <div class="settings">
      <Tabs
        label="Settings sections"
        items={sections.map((section) => ({
          href: section.id === 'general' ? path : `${path}?tab=${section.id}`,
          label: section.label,
          current: section === current,
        }))}
      />
      {!editable && (
        <p class="notice">
          You are a <strong>viewer</strong> of this website: you can read its settings but not change them.
        </p>
      )}
      <div class="settings-body">{current.render({ website, editable, onChange })}</div>
    </div>
  );
}
