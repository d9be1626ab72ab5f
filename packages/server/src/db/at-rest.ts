import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Config } from '../config/index.js';

/**
 * Secrets stored in the database (DKIM private keys) are sealed with AES-256-GCM under the data
 * encryption key, which lives outside the database (the secrets file or DATA_ENCRYPTION_KEY): a
 * database dump alone reveals nothing. A sealed value is `enc:v1:<key id>:<base64 iv|tag|ciphertext>`,
 * where the key id (8 hex characters of the key's SHA-256) says which key opens it, so values sealed
 * under the previous key stay readable during a rotation.
 */
export interface Keyring {
  current: Buffer;
  previous?: Buffer;
}

const PREFIX = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function keyringOf(config: Pick<Config, 'secrets'>): Keyring {
  const { current, previous } = config.secrets.dataEncryption;
  return { current: Buffer.from(current, 'hex'), previous: previous ? Buffer.from(previous, 'hex') : undefined };
}

export const keyId = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 8);

export const isSealed = (value: string) => value.startsWith(PREFIX);

export function seal(plain: string, key: Buffer): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `${PREFIX}${keyId(key)}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
}

/** The plain text of a sealed value; a value from before encryption (not sealed) is returned as is. */
export function open(value: string, keyring: Keyring): string {
  if (!isSealed(value)) return value;
  const [id, payload = ''] = value.slice(PREFIX.length).split(':');
  const key = [keyring.current, keyring.previous].find((k) => k && keyId(k) === id);
  if (!key) {
    throw new Error(
      `No data encryption key with id ${id}: set DATA_ENCRYPTION_KEY (or _PREVIOUS) to the key it was sealed with`,
    );
  }
  const raw = Buffer.from(payload, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}
