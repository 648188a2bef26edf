// The feature catalog (interface 2.2 and 4.6): the same for every business.
import type { z } from 'zod';
import { featurePageSchema, featureRequirements, featureRequirementsSchema, features, findFeature } from '../domain/feature-catalog.ts';
import { done, refuse, type Outcome } from '../domain/outcome.ts';
import { offsetOf, pageMeta, type Page } from '../domain/pagination.ts';

export function listFeatures(page: Page): Outcome<z.input<typeof featurePageSchema>> {
  const start = offsetOf(page);
  const items = features.slice(start, start + page.limit).map(({ id, name, slug, description }) => ({ id, name, slug, description }));
  return done({ items, meta: pageMeta(page, features.length) });
}

export function listFeatureRequirements(featureId: string): Outcome<z.input<typeof featureRequirementsSchema>> {
  const feature = findFeature(featureId);
  if (!feature) return refuse('featureNotFound', `No feature ${featureId}; GET /features lists the features.`, { parameter: 'featureId' });
  return done(featureRequirements(feature));
}
