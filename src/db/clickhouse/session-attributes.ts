// Which of a session's attributes its events carry (a module of its own: the schema and the
// sessions' fold both import it, and the schema imports the sessions' declaration).

/**
 * The session's attributes copied onto each of its events at ingestion (docs/decisions.md,
 * "Session attributes copied onto events"): its entry page (the first pageview's) and source (the
 * first event's referrer and campaign columns), named `s_` and the sessions table's column. A
 * filter on them tests the event's own row instead of looking the sessions up. Not in the relay's
 * rows (EVENT_COLUMNS): the relay writes them as it ships, from its session states.
 */
/** Where the session came from: its first event's referrer and campaign columns. */
export const SESSION_SOURCE_COLUMNS = [
  'referrer_host',
  'referrer_source',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
  'ref_param',
  'source_param',
  'via_param',
] as const;

export const SESSION_ATTRIBUTES = ['entry_hostname', 'entry_path', ...SESSION_SOURCE_COLUMNS] as const;

export type SessionAttribute = (typeof SESSION_ATTRIBUTES)[number];

/** The event column holding a session attribute. */
export const attributeColumn = (name: SessionAttribute): string => `s_${name}`;
