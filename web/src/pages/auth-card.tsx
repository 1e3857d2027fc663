// The frame and the password field of the pages of someone not signed in (signed-out.tsx and
// mailed-links.tsx).
import type { ComponentChildren, JSX } from 'preact';
import { Card, TextField } from '../components/index.ts';
import { useTitle } from '../session.tsx';

const PASSWORD_HINT = 'At least 10 characters.';

export function AuthCard({ title, intro, children }: { title: string; intro?: ComponentChildren; children: ComponentChildren }): JSX.Element {
  useTitle(title);
  return (
    <div class="auth">
      <h1>{title}</h1>
      {intro && <p class="auth-intro">{intro}</p>}
      <Card>{children}</Card>
    </div>
  );
}

export function PasswordField(props: { label?: string; value: string; onValue: (value: string) => void; error?: string; isNew?: boolean; hint?: string | null }) {
  return (
    <TextField
      type="password"
      label={props.label ?? 'Password'}
      value={props.value}
      onValue={props.onValue}
      autocomplete={props.isNew ? 'new-password' : 'current-password'}
      required
      minLength={props.isNew ? 10 : undefined}
      maxLength={200}
      hint={props.hint === null ? undefined : (props.hint ?? (props.isNew ? PASSWORD_HINT : undefined))}
      error={props.error}
    />
  );
}
