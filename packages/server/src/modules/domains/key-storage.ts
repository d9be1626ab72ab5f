import type pg from 'pg';
import { type Keyring, keyId, open, seal } from '../../db/at-rest.js';
import { queryRows, sql } from '../../db/query.js';
import { inTransaction, type Queryable } from '../../db/sql.js';

/** A DKIM private key as stored: sealed under the current data encryption key. */
export const sealDkimKey = (pem: string, keyring: Keyring) => seal(pem, keyring.current);

/** The PEM of a stored DKIM key (sealed under the current or previous key, or from before encryption). */
export const openDkimKey = (stored: string, keyring: Keyring) => open(stored, keyring);

/**
 * Seals the DKIM keys stored before encryption existed. Run at every start (after migrations);
 * each row is changed only if it still holds the plain text read, so concurrent starts agree.
 */
export async function sealPlaintextDkimKeys(db: Queryable, keyring: Keyring): Promise<number> {
  const rows = await queryRows<{ id: string; dkim_private_key: string }>(
    db,
    sql`SELECT id, dkim_private_key FROM domains WHERE dkim_private_key NOT LIKE 'enc:v1:%'`,
  );
  for (const row of rows) {
    await queryRows(
      db,
      sql`UPDATE domains SET dkim_private_key = ${sealDkimKey(row.dkim_private_key, keyring)}
          WHERE id = ${row.id} AND dkim_private_key = ${row.dkim_private_key}`,
    );
  }
  return rows.length;
}

/**
 * Re-seals every DKIM key under `newKey` (opening each with the keyring), in one transaction:
 * either every key moves to the new key or none does. Returns how many keys were re-sealed.
 */
export async function resealDkimKeys(pool: pg.Pool, keyring: Keyring, newKey: Buffer): Promise<number> {
  return inTransaction(pool, async (client) => {
    const rows = await queryRows<{ id: string; dkim_private_key: string }>(
      client,
      sql`SELECT id, dkim_private_key FROM domains WHERE dkim_private_key NOT LIKE ${`enc:v1:${keyId(newKey)}:%`} FOR UPDATE`,
    );
    for (const row of rows) {
      await queryRows(
        client,
        sql`UPDATE domains SET dkim_private_key = ${seal(open(row.dkim_private_key, keyring), newKey)} WHERE id = ${row.id}`,
      );
    }
    return rows.length;
  });
}
