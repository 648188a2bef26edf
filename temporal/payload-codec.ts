// Payload encryption for everything Temporal stores: every client and worker encodes each payload
// (workflow inputs and results, activity arguments and results, signals, queries, updates,
// failures' details, and failures' messages and stacks: temporal/failure-converter.ts) as `binary/encrypted`: AES-256-GCM over the serialised payload, a fresh
// 12-byte nonce each time, the key id in the metadata and bound as associated data. The first key
// of the ring encrypts; every key decrypts, so a rotation (a new key put first, old ones kept)
// still reads old histories. A payload that is not encrypted is refused: it was not written by a
// Vouch client or worker, so whoever wrote it reached Temporal's port (an input or a signal injected
// in clear); PAYLOAD_CODEC_ACCEPT_PLAINTEXT reads histories from before payload encryption, and the
// codec endpoint and the replay CLI, which only read, pass them as they are.
//
// The ring is runtime/codec-keys.ts's (it also seals subscription secrets at rest).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { DataConverter, Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import proto from '@temporalio/proto'; // CommonJS: its namespaces come through the default export
import { ConfigError } from '../runtime/config.ts';
import type { CodecKey } from '../runtime/codec-keys.ts';

const ProtoPayload = proto.temporal.api.common.v1.Payload;
export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID_METADATA = 'encryption-key-id';
const WORKFLOW_ID_METADATA = 'encryption-workflow-id';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const utf8 = new TextEncoder();
const text = new TextDecoder();

/**
 * The associated data: the key id, and the workflow the payload was written for when the SDK names
 * it (its SerializationContext: the workflow's own payloads, its activities', signals and queries to
 * it). The workflow id rides in the metadata too, so a reader without a context (the codec endpoint)
 * still decrypts, and a changed id fails the tag. Payloads written before carry no workflow id and
 * read as before.
 */
function associatedData(keyId: string, workflowId: string | undefined): Uint8Array {
  return utf8.encode(workflowId === undefined ? keyId : `${keyId}\n${workflowId}`);
}

/**
 * Whether a payload written for `boundTo` may be read in `workflowId`: the same workflow, or a run a
 * schedule started — its action is encoded for the id the schedule names, and Temporal appends the
 * run's scheduled time to it (`housekeeping-2026-12-01T00:00:00Z`).
 */
export function sameWorkflow(boundTo: string, workflowId: string): boolean {
  if (boundTo === workflowId) return true;
  if (!workflowId.startsWith(`${boundTo}-`)) return false;
  const appended = workflowId.slice(boundTo.length + 1);
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(appended);
}

/** What decode does with a payload that is not encrypted: refuse it (the default), or pass it as it is (reading only, or old histories). */
export type Plaintext = 'refuse' | 'pass';

export const isEncrypted = (p: Payload): boolean => Boolean(p.metadata?.encoding) && text.decode(p.metadata!.encoding!) === ENCRYPTED_ENCODING;

export function createEncryptionCodec(ring: readonly CodecKey[], options: { plaintext?: Plaintext } = {}): PayloadCodec {
  if (ring.length === 0) throw new ConfigError('the payload codec key ring is empty');
  const current = ring[0]!;
  const byId = new Map(ring.map((k) => [k.id, k.key]));
  return {
    async encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
      const workflowId = context?.workflowId;
      return payloads.map((p) => {
        const nonce = randomBytes(NONCE_BYTES);
        const cipher = createCipheriv('aes-256-gcm', current.key, nonce);
        cipher.setAAD(associatedData(current.id, workflowId));
        const sealed = Buffer.concat([cipher.update(ProtoPayload.encode(p).finish()), cipher.final()]);
        return {
          metadata: {
            encoding: utf8.encode(ENCRYPTED_ENCODING),
            [KEY_ID_METADATA]: utf8.encode(current.id),
            ...(workflowId ? { [WORKFLOW_ID_METADATA]: utf8.encode(workflowId) } : {}),
          },
          data: Buffer.concat([nonce, sealed, cipher.getAuthTag()]),
        };
      });
    },
    async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
      return payloads.map((p) => {
        if (!isEncrypted(p)) {
          if (options.plaintext === 'pass') return p;
          const encoding = p.metadata?.encoding ? text.decode(p.metadata.encoding) : 'none';
          throw new Error(
            `a payload that is not encrypted (encoding ${encoding}) is refused: no Vouch client or worker wrote it ` +
              '(set PAYLOAD_CODEC_ACCEPT_PLAINTEXT=true only to run histories from before payload encryption)',
          );
        }
        const keyId = p.metadata?.[KEY_ID_METADATA];
        const id = keyId ? text.decode(keyId) : '';
        const key = byId.get(id);
        if (!key) throw new Error(`payload encrypted with key "${id}", which is not in the payload codec key ring`);
        const boundTo = p.metadata?.[WORKFLOW_ID_METADATA] ? text.decode(p.metadata[WORKFLOW_ID_METADATA]) : undefined;
        // a payload bound to one workflow is refused in another's: copied from its history into a run it was not written for
        if (boundTo !== undefined && context?.workflowId && !sameWorkflow(boundTo, context.workflowId))
          throw new Error(`a payload written for workflow "${boundTo}" is refused in workflow "${context.workflowId}"`);
        const data = Buffer.from(p.data ?? new Uint8Array());
        const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, NONCE_BYTES));
        decipher.setAAD(associatedData(id, boundTo));
        decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
        const plain = Buffer.concat([decipher.update(data.subarray(NONCE_BYTES, data.length - TAG_BYTES)), decipher.final()]);
        return ProtoPayload.decode(plain) as Payload;
      });
    },
  };
}

/** The failure converter's module (temporal/failure-converter.ts): failures' messages encoded, so encrypted. */
export const FAILURE_CONVERTER_PATH = fileURLToPath(new URL('./failure-converter.ts', import.meta.url));

/** The data converter every client and worker uses: every payload encrypted, failures' messages and stacks among them. */
export const encryptingDataConverter = (ring: readonly CodecKey[], plaintext: Plaintext = 'refuse'): DataConverter => ({
  payloadCodecs: [createEncryptionCodec(ring, { plaintext })],
  failureConverterPath: FAILURE_CONVERTER_PATH,
});
