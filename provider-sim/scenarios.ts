// Named applicant scenarios: data a donor's applicant can hold, so a test picks an outcome through
// the data itself, never through a special code path in the service.

export const SCENARIOS = ['complete', 'missing-address', 'under-18', 'expired-document', 'missing-document', 'donor-rejected'] as const;
export type Scenario = (typeof SCENARIOS)[number];

const day = 86_400_000;
const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const yearsAgo = (now: number, years: number) => {
  const d = new Date(now);
  d.setUTCFullYear(d.getUTCFullYear() - years);
  return isoDate(d.getTime());
};

const FIRST = ['Ana', 'Ben', 'Chloe', 'David', 'Elena', 'Farid', 'Grace', 'Hugo', 'Ines', 'Jonas'];
const LAST = ['Silva', 'Okafor', 'Martin', 'Novak', 'Larsen', 'Haddad', 'Kim', 'Moreau', 'Rossi', 'Schmidt'];

/** The applicant `info` and review of a donor applicant in the given scenario (n varies names). */
export function scenarioApplicant(scenario: Scenario, now: number, n = 0) {
  const info: Record<string, unknown> = {
    firstName: FIRST[n % FIRST.length],
    lastName: LAST[Math.floor(n / FIRST.length) % LAST.length],
    dob: yearsAgo(now - (n % 300) * day, 34),
    country: 'GBR',
    nationality: 'GBR',
    addresses: [{ country: 'GBR', postCode: 'EC1A 1BB', town: 'London', street: 'Aldersgate Street', buildingNumber: String(1 + (n % 200)) }],
    idDocs: [
      {
        idDocType: 'PASSPORT',
        country: 'GBR',
        number: `P${String(100000000 + n).slice(-9)}`,
        issuedDate: isoDate(now - 800 * day),
        validUntil: isoDate(now + 2000 * day),
      },
    ],
  };
  let review = { reviewStatus: 'completed', reviewResult: { reviewAnswer: 'GREEN' } as Record<string, unknown> };
  switch (scenario) {
    case 'complete':
      break;
    case 'missing-address':
      delete info.addresses;
      break;
    case 'under-18':
      info.dob = yearsAgo(now, 16);
      break;
    case 'expired-document':
      info.idDocs = [
        {
          idDocType: 'PASSPORT',
          country: 'GBR',
          number: `P${String(200000000 + n).slice(-9)}`,
          issuedDate: isoDate(now - 3700 * day),
          validUntil: isoDate(now - 30 * day),
        },
      ];
      break;
    case 'missing-document':
      delete info.idDocs;
      break;
    case 'donor-rejected':
      review = {
        reviewStatus: 'completed',
        reviewResult: { reviewAnswer: 'RED', rejectLabels: ['FORGERY'], reviewRejectType: 'FINAL', moderationComment: 'Document appears altered.' },
      };
      break;
  }
  return { info, review };
}
