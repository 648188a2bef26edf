// The feature catalog: what a client can enable for its entities and what each feature requires.
// It is static product data, versioned with the code; the API serves it and entity creation
// validates submitted requirements against it. Ids are fixed so clients can store them.

export type RequirementLevel = 'REQUIRED' | 'OPTIONAL' | 'PREFERED';
export type EntityType = 'INDIVIDUAL' | 'BUSINESS';
export type ValueType = 'BOOLEAN' | 'NUMERIC' | 'STRING' | 'FILE' | 'JSON';
/** Where a requirement's value is submitted: in `POST /entity`, the requirement endpoint, a file upload, or universal KYB (`/ukyb`, `/ukyb/documents`). */
export type SubmittedVia = 'entity-create' | 'requirement-endpoint' | 'file-upload' | 'ukyb';

export type Requirement = {
  id: string;
  slug: string;
  name: string;
  valueType: ValueType;
  associatedEntity: EntityType;
  submittedVia: SubmittedVia;
  /** For STRING values: the pattern a value must match, and its description. */
  pattern?: { regex: RegExp; description: string };
  /** For JSON values with a form of their own: the schema a value must match. */
  schema?: z.ZodType;
};

export type Feature = {
  id: string;
  name: string;
  slug: string;
  description: string;
  requirements: { requirementSlug: string; requirementLevel: RequirementLevel }[];
  /**
   * Assignable to members of a BUSINESS entity (POST /entity/{entityId}/feature/{featureId}/assignments):
   * enabled for a member while the person has `personFeature` (its own verification approved, any
   * path) and the business entity has `businessFeature` (its KYB approved). Slugs of this catalog.
   */
  assignment?: { personFeature: string; businessFeature: string };
};

import { z } from 'zod';
import { memberDeclaration } from './members.ts';
import { pageMetaSchema } from './pagination.ts';
import { CARD_PROCESSOR_TOKEN } from './share-fields.ts';

const req = (r: Requirement) => r;

export const requirements: readonly Requirement[] = [
  req({
    id: 'ec73e770-0dfd-408c-8edd-b601e3ce8c7c',
    slug: 'ukyc-canonical-kyc-data',
    name: 'Canonical KYC data',
    valueType: 'JSON',
    associatedEntity: 'INDIVIDUAL',
    submittedVia: 'requirement-endpoint',
  }),
  req({
    id: 'b4136212-398e-48bc-91bf-78ff1938190d',
    slug: 'ukyc-id-document',
    name: 'Identity document',
    valueType: 'FILE',
    associatedEntity: 'INDIVIDUAL',
    submittedVia: 'file-upload',
  }),
  req({
    id: '19f041d2-4cd5-45ed-9c59-d23b88dc7496',
    slug: 'ukyc-proof-of-address-document',
    name: 'Proof of address document',
    valueType: 'FILE',
    associatedEntity: 'INDIVIDUAL',
    submittedVia: 'file-upload',
  }),
  req({
    id: 'bd220feb-7291-49d7-8b2a-b4b186ddd8da',
    slug: 'card-processor-public-token',
    name: 'Card processor public token',
    valueType: 'STRING',
    associatedEntity: 'INDIVIDUAL',
    submittedVia: 'entity-create',
    pattern: { regex: CARD_PROCESSOR_TOKEN, description: 'exactly 9 digits' },
  }),
  req({
    id: 'e0871610-2bc3-4d25-956f-eb45220a8ea9',
    slug: 'kyb-legal-name',
    name: 'Legal name',
    valueType: 'STRING',
    associatedEntity: 'BUSINESS',
    submittedVia: 'entity-create',
  }),
  req({
    id: '41d14a8e-25d3-47c9-b674-355a39974d89',
    slug: 'kyb-registration-number',
    name: 'Company registration number',
    valueType: 'STRING',
    associatedEntity: 'BUSINESS',
    submittedVia: 'entity-create',
  }),
  req({
    id: 'a3dba1bf-b687-4fae-92e9-9513e498eec1',
    slug: 'kyb-country-of-incorporation',
    name: 'Country of incorporation',
    valueType: 'STRING',
    associatedEntity: 'BUSINESS',
    submittedVia: 'entity-create',
    pattern: { regex: /^[A-Z]{3}$/, description: 'an ISO 3166-1 alpha-3 code' },
  }),
  req({
    id: '3a5f0f8e-52a4-4c2e-9d1b-6f0c2e7d9a11',
    slug: 'ukyb-business-profile',
    name: 'Business profile and declared owners (POST /ukyb)',
    valueType: 'JSON',
    associatedEntity: 'BUSINESS',
    submittedVia: 'ukyb',
  }),
  req({
    id: '8abc4822-b072-40a8-bd5e-41f343fcde10',
    slug: 'ukyb-certificate-of-incorporation',
    name: 'Certificate of incorporation',
    valueType: 'FILE',
    associatedEntity: 'BUSINESS',
    submittedVia: 'ukyb',
  }),
  req({
    id: '7c1e2b44-0d8f-4a39-b5e6-2f94d3c1a8b7',
    slug: 'ukyb-proof-of-address',
    name: 'Proof of business address',
    valueType: 'FILE',
    associatedEntity: 'BUSINESS',
    submittedVia: 'ukyb',
  }),
  req({
    id: 'c9d04b6a-71e3-4f25-8a0c-5b2e96f1d403',
    slug: 'ukyb-register-of-shareholders',
    name: 'Register of shareholders',
    valueType: 'FILE',
    associatedEntity: 'BUSINESS',
    submittedVia: 'ukyb',
  }),
  req({
    id: '1f6a8d30-9c47-4e1b-b2d5-e8a07c3f6b92',
    slug: 'ukyb-articles-of-association',
    name: 'Articles of association',
    valueType: 'FILE',
    associatedEntity: 'BUSINESS',
    submittedVia: 'ukyb',
  }),
  req({
    id: '5e2b7c19-a843-4d60-9f1e-0b6d4a28c7e5',
    slug: 'ukyb-owner-document',
    name: "A declared owner's identity document (PASSPORT, ID_CARD, DRIVERS_LICENCE or RESIDENCE_PERMIT)",
    valueType: 'FILE',
    associatedEntity: 'INDIVIDUAL',
    submittedVia: 'ukyb',
  }),
  req({
    id: '58924e45-8cb2-4cca-97b0-1833be3c59ca',
    slug: 'kyb-ubo-declaration',
    name: 'Beneficial owner declaration',
    valueType: 'JSON',
    associatedEntity: 'BUSINESS',
    submittedVia: 'entity-create',
    schema: memberDeclaration,
  }),
  req({
    id: 'cbde7a97-2b95-4446-b6a8-f696e604d10b',
    slug: 'kyb-annual-turnover',
    name: 'Annual turnover (EUR)',
    valueType: 'NUMERIC',
    associatedEntity: 'BUSINESS',
    submittedVia: 'entity-create',
  }),
  req({
    id: '0c1656e3-a657-4756-8c14-18b68800031a',
    slug: 'kyb-regulated-entity',
    name: 'Regulated financial entity',
    valueType: 'BOOLEAN',
    associatedEntity: 'BUSINESS',
    submittedVia: 'entity-create',
  }),
];

export const features: readonly Feature[] = [
  {
    id: '0e72185c-b3f4-4f70-9e1e-eb1940004e03',
    name: 'Card issuance API access',
    slug: 'card-issuance-api-access',
    description: 'An individual cardholder may be issued cards. Enabled when the KYC decision is APPROVED.',
    requirements: [
      { requirementSlug: 'ukyc-canonical-kyc-data', requirementLevel: 'REQUIRED' },
      { requirementSlug: 'ukyc-id-document', requirementLevel: 'REQUIRED' },
      { requirementSlug: 'ukyc-proof-of-address-document', requirementLevel: 'OPTIONAL' },
      { requirementSlug: 'card-processor-public-token', requirementLevel: 'PREFERED' },
    ],
  },
  {
    id: '66c82cfd-1b04-4a2d-a7d5-73e15c2ce858',
    name: 'Business card program',
    slug: 'business-card-program',
    description:
      'A business may be issued corporate cards. Enabled when the universal KYB decision is ' +
      'APPROVED: the profile (POST /ukyb), the documents (POST /ukyb/documents), and every ' +
      'declared owner verified as a person.',
    requirements: [
      { requirementSlug: 'ukyb-business-profile', requirementLevel: 'REQUIRED' },
      { requirementSlug: 'ukyb-certificate-of-incorporation', requirementLevel: 'REQUIRED' },
      { requirementSlug: 'ukyb-proof-of-address', requirementLevel: 'REQUIRED' },
      { requirementSlug: 'ukyb-register-of-shareholders', requirementLevel: 'REQUIRED' },
      { requirementSlug: 'ukyb-articles-of-association', requirementLevel: 'OPTIONAL' },
      { requirementSlug: 'ukyb-owner-document', requirementLevel: 'REQUIRED' },
      { requirementSlug: 'kyb-legal-name', requirementLevel: 'OPTIONAL' },
      { requirementSlug: 'kyb-registration-number', requirementLevel: 'OPTIONAL' },
      { requirementSlug: 'kyb-country-of-incorporation', requirementLevel: 'OPTIONAL' },
      { requirementSlug: 'kyb-ubo-declaration', requirementLevel: 'OPTIONAL' },
      { requirementSlug: 'kyb-annual-turnover', requirementLevel: 'PREFERED' },
      { requirementSlug: 'kyb-regulated-entity', requirementLevel: 'OPTIONAL' },
    ],
  },
  {
    id: 'dcf5348d-0165-44b8-85be-ed9fe2ac5c6f',
    name: 'Business cardholder',
    slug: 'business-cardholder',
    description:
      'A member of a business entity may hold cards of its business card program. Assigned to ' +
      'declared members (POST /entity/{entityId}/feature/{featureId}/assignments); enabled for a ' +
      "member when the person's own KYC decision is APPROVED (any path: token sharing, hosted SDK, " +
      "universal KYC) and the business entity's KYB decision is APPROVED (business-card-program).",
    requirements: [
      { requirementSlug: 'ukyc-canonical-kyc-data', requirementLevel: 'REQUIRED' },
      { requirementSlug: 'ukyc-id-document', requirementLevel: 'REQUIRED' },
      { requirementSlug: 'ukyc-proof-of-address-document', requirementLevel: 'OPTIONAL' },
    ],
    assignment: { personFeature: 'card-issuance-api-access', businessFeature: 'business-card-program' },
  },
];

const bySlug = new Map(requirements.map((r) => [r.slug, r]));

export function findRequirement(slug: string): Requirement | undefined {
  return bySlug.get(slug);
}

export function findFeature(id: string): Feature | undefined {
  return features.find((f) => f.id === id);
}

/** GET /features: a page of features in the interface's shape (section 2.2). */
export const featurePageSchema = z.object({
  items: z.array(z.object({ id: z.uuid(), name: z.string(), slug: z.string(), description: z.string() })),
  meta: pageMetaSchema(),
});

const featureRequirementSchema = z.object({
  requirementId: z.uuid(),
  requirementLevel: z.enum(['REQUIRED', 'OPTIONAL', 'PREFERED']),
  requirementSlug: z.string(),
  associatedEntity: z.enum(['INDIVIDUAL', 'BUSINESS']),
  valueType: z.enum(['BOOLEAN', 'NUMERIC', 'STRING', 'FILE', 'JSON']),
});
/** GET /feature/{featureId}/requirement: every requirement of the feature. */
/** GET /feature/{featureId}/requirement (4.6: "list of feature requirements"): a JSON array, every one (a feature has a handful). */
export const featureRequirementsSchema = z.array(featureRequirementSchema);

/** A feature's requirements in the interface's shape (section 2.2). */
export function featureRequirements(feature: Feature): z.input<typeof featureRequirementSchema>[] {
  return feature.requirements.map(({ requirementSlug, requirementLevel }) => {
    const r = bySlug.get(requirementSlug);
    if (!r) throw new Error(`catalog: feature ${feature.slug} names unknown requirement ${requirementSlug}`);
    return {
      requirementId: r.id,
      requirementLevel,
      requirementSlug,
      associatedEntity: r.associatedEntity,
      valueType: r.valueType,
    };
  });
}
