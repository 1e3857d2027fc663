import type { IdentifiedView } from './identify.schemas.ts';

export function presentIdentified(profileId: string): IdentifiedView {
  return { message: 'Visitor identified', profileId };
}
