import { type Static, Type } from 'typebox';
import { Id, Timestamp } from '../../http/schemas.ts';

// Segments (issue 37 item 5): saved filter sets of a website, personal or shared with its team.

export const SEGMENT_NAME_MAX = 100;
export const SEGMENTS_PER_WEBSITE_MAX = 200;

/** The URL's filter set: filter_<dimension> to "op:value1,value2", as the stats routes read it. */
export const SegmentFilters = Type.Record(
  Type.String({ pattern: '^[a-z_]{1,40}$' }),
  Type.String({ minLength: 1, maxLength: 8000 }),
  {
    description:
      'the analytics filters as the stats routes take them: filter_<dimension> to op:value1,value2 ' +
      '(checked by the same parser; at least one)',
    examples: [{ filter_country: 'is:US,DE', filter_page: 'contains:/blog' }],
    minProperties: 1,
    maxProperties: 19,
  },
);

export const Segment = Type.Object({
  id: Id,
  _id: Id,
  websiteId: Id,
  name: Type.String(),
  filters: Type.Record(Type.String(), Type.String()),
  shared: Type.Boolean({ description: "true: the website's team sees it; false: only its owner" }),
  owner: Type.Object({ id: Id, name: Type.String() }, { description: 'the account that saved it' }),
  canEdit: Type.Boolean({ description: 'whether the caller may change or delete it' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type SegmentView = Static<typeof Segment>;

export const SegmentParams = Type.Object({ websiteId: Id, segmentId: Id }, { additionalProperties: false });

const SegmentName = Type.String({ minLength: 1, maxLength: SEGMENT_NAME_MAX, description: `1-${SEGMENT_NAME_MAX} characters, not only white space` });
const Shared = Type.Boolean({ description: "share it with the website's team (owners and members only); default false" });

export const CreateSegmentBody = Type.Object(
  { name: SegmentName, filters: SegmentFilters, shared: Type.Optional(Shared) },
  { additionalProperties: false, examples: [{ name: 'US blog readers', filters: { filter_country: 'is:US', filter_page: 'contains:/blog' } }] },
);
export type CreateSegmentInput = Static<typeof CreateSegmentBody>;

export const UpdateSegmentBody = Type.Object(
  { name: Type.Optional(SegmentName), filters: Type.Optional(SegmentFilters), shared: Type.Optional(Shared) },
  { additionalProperties: false, minProperties: 1, examples: [{ shared: true }] },
);
export type UpdateSegmentInput = Static<typeof UpdateSegmentBody>;
