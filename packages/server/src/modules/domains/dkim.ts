import { createPrivateKey, generateKeyPair, type KeyObject, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import type { Keyring } from '../../db/at-rest.js';
import { openDkimKey } from './key-storage.js';

const generate = promisify(generateKeyPair);

/** A fresh RSA-2048 key pair: the PEM private key and the base64 public key for the DNS record. */
export async function generateDkimKeys() {
  const { privateKey, publicKey } = await generate('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return {
    privateKey,
    publicKey: Buffer.from(publicKey).toString('base64'),
    selector: `pigeon${randomBytes(4).toString('hex')}`,
  };
}

export const dkimRecordValue = (publicKey: string) => `v=DKIM1; k=rsa; p=${publicKey}`;

const parsed = new Map<string, KeyObject>();

/**
 * The signing key of a stored (sealed) DKIM key. Opened and parsed once per process: nodemailer
 * re-parses a PEM key for every message, and a parsed KeyObject signs about twice as fast.
 */
export function dkimKeyObject(stored: string, keyring: Keyring): KeyObject {
  let key = parsed.get(stored);
  if (!key) {
    key = createPrivateKey(openDkimKey(stored, keyring));
    parsed.set(stored, key);
  }
  return key;
}
