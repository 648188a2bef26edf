// The verified person an approved decision rests on, in one shape for every path (token sharing,
// hosted SDK, universal KYC): the name, date of birth, one residential address and one identity
// document, chosen by the same rules the decision used (reliance.ts). It is what a signed payload
// carries (signed-payload.ts) and what the store keeps per KYC account.
import { isIdentityDocument, type SharedIdentity } from './reliance.ts';

export type ResidentialAddress = {
  country: string;
  postCode: string;
  street: string;
  town?: string;
  state?: string;
  subStreet?: string;
  buildingNumber?: string;
  flatNumber?: string;
};

export type VerifiedPerson = {
  firstName: string | null;
  lastName: string | null;
  dob: string | null;
  residentialAddress: ResidentialAddress | null;
  idDocument: { type: string; number: string; validUntil: string | null } | null;
};

/** What the choice reads: the decision's input, with the address's optional parts. */
export type PersonData = Omit<SharedIdentity, 'addresses'> & {
  addresses: (SharedIdentity['addresses'][number] & Partial<Record<'town' | 'state' | 'subStreet' | 'buildingNumber' | 'flatNumber', string | null>>)[];
};

const OPTIONAL_ADDRESS_PARTS = ['town', 'state', 'subStreet', 'buildingNumber', 'flatNumber'] as const;

/**
 * The first complete address (country, street, post code) and the identity document that lasts
 * longest (no expiry date counts as longest); null where the data has none.
 */
export function verifiedPersonOf(data: PersonData): VerifiedPerson {
  const address = data.addresses.find((a) => a.country && a.street && a.postCode);
  let residentialAddress: ResidentialAddress | null = null;
  if (address) {
    residentialAddress = { country: address.country!, postCode: address.postCode!, street: address.street! };
    for (const part of OPTIONAL_ADDRESS_PARTS) {
      const v = address[part];
      if (v) residentialAddress[part] = v;
    }
  }
  const lasting = (until: string | null) => until ?? '9999-12-31';
  const doc = data.documents.filter(isIdentityDocument).sort((a, b) => lasting(b.validUntil).localeCompare(lasting(a.validUntil)))[0];
  return {
    firstName: data.person.firstName,
    lastName: data.person.lastName,
    dob: data.person.dob ? data.person.dob.slice(0, 10) : null,
    residentialAddress,
    idDocument: doc
      ? { type: doc.type === 'DRIVERS' ? 'DRIVERS_LICENCE' : doc.type, number: doc.number!, validUntil: doc.validUntil ? doc.validUntil.slice(0, 10) : null }
      : null,
  };
}
