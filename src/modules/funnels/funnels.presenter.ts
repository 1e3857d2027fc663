import type { Funnel } from './funnels.repository.ts';
import type { FunnelStepView, FunnelView } from './funnels.schemas.ts';

function presentStep(step: FunnelStepView): FunnelStepView {
  return step.type === 'pageview'
    ? { id: step.id, name: step.name, type: step.type, url: step.url }
    : { id: step.id, name: step.name, type: step.type, goalName: step.goalName };
}

export function presentFunnel(funnel: Funnel): FunnelView {
  return {
    id: funnel.id,
    _id: funnel.id,
    websiteId: funnel.website_id,
    name: funnel.name,
    slug: funnel.slug,
    steps: funnel.steps.map(presentStep),
    isActive: funnel.is_active,
    createdAt: funnel.created_at,
    updatedAt: funnel.updated_at,
  };
}
