// THE role matrix (contract section 3). Every role decision in the code asks this table.

export type Role = 'owner' | 'member' | 'viewer';

/** What a route does to a website, as far as roles are concerned. */
export type WebsiteAction = 'read' | 'manage' | 'manageTeam' | 'exportRaw' | 'delete';

const MATRIX: Record<WebsiteAction, Record<Role, boolean>> = {
  // read anything (*:read, analytics:read)
  read: { owner: true, member: true, viewer: true },
  // update settings and integrations; manage API keys, goals, funnels, alerts
  manage: { owner: true, member: true, viewer: false },
  // invite or remove team members
  manageTeam: { owner: true, member: false, viewer: false },
  // take every raw event and payment away (issue 37: the data is the owner's to leave with)
  exportRaw: { owner: true, member: false, viewer: false },
  // delete the website and everything it holds (the dashboard only)
  delete: { owner: true, member: false, viewer: false },
};

export function roleAllows(role: Role, action: WebsiteAction): boolean {
  return MATRIX[action][role];
}

/** A `df_` key acts on its own website with member rights. */
export const API_KEY_ROLE: Role = 'member';

export function describeAction(action: WebsiteAction): string {
  return {
    read: 'read this website',
    manage: 'change this website',
    manageTeam: 'manage the team of this website (owner only)',
    exportRaw: "export this website's raw data (owner only)",
    delete: 'delete this website (owner only)',
  }[action];
}
