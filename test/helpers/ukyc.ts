// Universal KYC test data: a canonical KYC payload (interface 2.7) that passes every rule, with
// changes, and the smallest files of each accepted type (and one that is not).
const day = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

export function canonicalPayload(change: (p: any) => void = () => {}): any {
  const p = {
    externalUserId: `client-user-${Math.random().toString(36).slice(2, 10)}`,
    provider: { name: 'onfido', status: 'APPROVED', data: [{ checkId: 'chk-1', result: 'clear' }] },
    identity: { firstName: 'Zoë', middleName: 'Anne', lastName: "O'Neill-Brown", fullName: "Zoë Anne O'Neill-Brown", dob: '1988-04-12', nationality: 'IRL' },
    document: [{ type: 'PASSPORT', number: 'PA1234567', country: 'IRL', issuingDate: day(-400), expiryDate: day(3000) }],
    address: { country: 'IRL', postCode: 'D02 X285', street: 'Grafton Street', town: 'Dublin', buildingNumber: '12' },
    liveness: { result: 'APPROVED', checkedAt: new Date(Date.now() - 3600_000).toISOString() },
  };
  change(p);
  return p;
}

export const FILES = {
  pdf: Buffer.from('%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n'),
  png: Buffer.from(
    '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000a49444154789c63000100000500010d0a2db40000000049454e44ae426082',
    'hex',
  ),
  jpeg: Buffer.from(
    'ffd8ffe000104a46494600010100000100010000ffdb004300080606070605080707070909080a0c140d0c0b0b0c1912130f141d1a1f1e1d1a1c1c20' +
      '242e2720222c231c1c2837292c30313434341f27393d38323c2e333432ffd9',
    'hex',
  ),
  heic: (() => {
    const b = Buffer.alloc(32);
    b.writeUInt32BE(24, 0);
    b.write('ftypheic', 4);
    b.write('mif1heic', 16);
    return b;
  })(),
  text: Buffer.from('this is not a document\n'),
};

/** A multipart body with the given files in the form field (default `files`). */
export function filesForm(files: { bytes: Buffer; name: string; type?: string }[], field = 'files'): FormData {
  const form = new FormData();
  for (const f of files) form.append(field, new Blob([f.bytes], { type: f.type ?? 'application/octet-stream' }), f.name);
  return form;
}

/** A KYB documents form (POST /ukyb/documents): the text fields first, as clients send them, then the files. */
export function documentsForm(fields: Record<string, string>, files: { bytes: Buffer; name: string }[] = [{ bytes: FILES.pdf, name: 'doc.pdf' }]): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  for (const [name, value] of filesForm(files).entries()) form.append(name, value);
  return form;
}
