// What every settings section takes. Its own module, so the sections do not import SettingsPage,
// which imports them.
import type { Website } from '../../types.ts';

export interface SectionProps {
  website: Website;
  /** Whether the caller's role may change this section (owner or member). */
  editable: boolean;
  onChange: (website: Website) => void;
}
