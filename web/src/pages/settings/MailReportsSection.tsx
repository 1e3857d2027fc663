// Reports by mail (issue 37 item 4). Two forms: the website's switches (owner and members; a
// viewer reads them), and the caller's own choice, which every member makes for themself, a
// viewer included: weekly report (on unless opted out), monthly report (opt-in), traffic-spike
// alerts (on unless opted out). The mails' unsubscribe links change the same choice.
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { Card, CheckboxField, ErrorMessage, Loaded, SubmitButton, fieldErrors, useAsync, useSubmit } from '../../components/index.ts';
import type { MailReports, Website } from '../../types.ts';
import type { SectionProps } from './section-props.ts';

function WebsiteSwitches({ website, editable, onChange }: SectionProps): JSX.Element {
  const [weekly, setWeekly] = useState(website.sendWeeklyReports);
  const [spike, setSpike] = useState(website.sendViralTrafficAlerts);
  const { busy, error, notice, onSubmit } = useSubmit();
  const errors = fieldErrors(error);
  useEffect(() => {
    setWeekly(website.sendWeeklyReports);
    setSpike(website.sendViralTrafficAlerts);
  }, [website.sendWeeklyReports, website.sendViralTrafficAlerts]);
  const save = onSubmit(async () => {
    const saved = await api.put<Website>(`/api/v1/admin/websites/${website.id}`, { sendWeeklyReports: weekly, sendViralTrafficAlerts: spike });
    onChange(saved);
    return 'Saved.';
  });
  return (
    <Card title="Reports by mail for this website">
      <form onSubmit={save}>
        <fieldset disabled={!editable} class="plain-fieldset">
          <legend class="visually-hidden">The website's reports by mail</legend>
          <CheckboxField
            label="Mail reports to the team"
            checked={weekly}
            onChecked={setWeekly}
            hint="A weekly summary after each Monday 00:00 in the website's time zone, to every member who has not opted out; a monthly one to members who opt in."
            error={errors.sendWeeklyReports}
          />
          <CheckboxField
            label="Mail traffic-spike alerts to the team"
            checked={spike}
            onChecked={setSpike}
            hint="When an hour's visitors are far above the usual for that hour (several times the median of the same hour over the last 28 days), with a pause of some hours between alerts."
            error={errors.sendViralTrafficAlerts}
          />
        </fieldset>
        {editable && (
          <div class="form-actions">
            <ErrorMessage error={Object.keys(errors).length ? null : error} />
            <p class="notice" role="status">
              {notice}
            </p>
            <SubmitButton busy={busy} busyLabel="Saving…" label="Save" />
          </div>
        )}
      </form>
    </Card>
  );
}

function OwnChoice({ website, initial }: { website: Website; initial: MailReports }): JSX.Element {
  const [choice, setChoice] = useState({ weekly: initial.weekly, monthly: initial.monthly, spike: initial.spike });
  const { busy, error, notice, onSubmit } = useSubmit();
  const set = (kind: keyof typeof choice) => (value: boolean) => setChoice((current) => ({ ...current, [kind]: value }));
  const save = onSubmit(async () => {
    await api.put<MailReports>(`/api/v1/admin/websites/${website.id}/mail-reports`, choice);
    return 'Saved.';
  });
  const reportsOff = website.sendWeeklyReports ? undefined : 'The website sends no reports at the moment.';
  const spikesOff = website.sendViralTrafficAlerts ? undefined : 'The website sends no traffic-spike alerts at the moment.';
  return (
    <form onSubmit={save}>
      <CheckboxField label="Weekly report" checked={choice.weekly} onChecked={set('weekly')} hint={reportsOff} />
      <CheckboxField label="Monthly report" checked={choice.monthly} onChecked={set('monthly')} hint={reportsOff} />
      <CheckboxField label="Traffic-spike alerts" checked={choice.spike} onChecked={set('spike')} hint={spikesOff} />
      <div class="form-actions">
        <ErrorMessage error={error} />
        <p class="notice" role="status">
          {notice}
        </p>
        <SubmitButton busy={busy} busyLabel="Saving…" label="Save my choice" />
      </div>
    </form>
  );
}

export function MailReportsSection(props: SectionProps): JSX.Element {
  const { website } = props;
  const state = useAsync(() => api.get<MailReports>(`/api/v1/admin/websites/${website.id}/mail-reports`), [website.id]);
  return (
    <>
      <WebsiteSwitches {...props} />
      <Card title="Your reports by mail">
        <p class="muted">What you receive for {website.domain}. Each mail also has an unsubscribe link that works without signing in.</p>
        <Loaded state={state} loadingLabel="Loading your reports by mail">
          {(mine) => <OwnChoice website={website} initial={mine} />}
        </Loaded>
      </Card>
    </>
  );
}
