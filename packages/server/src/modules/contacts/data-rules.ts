/** Keys never stored nor accepted from callers: identity and Pigeon's own link variables. */
export const RESERVED_KEYS = new Set([
  'id',
  'pigeon_id',
  'pigeon_email',
  'email',
  'unsubscribeUrl',
  'subscribeUrl',
  'manageUrl',
]);

export interface DataChanges {
  /** Keys to write into the contact's stored data. */
  set: Record<string, unknown>;
  /** Keys to delete from the stored data (`null` values). */
  unset: string[];
  /** What this request may use as template variables without storing (`persistent: false`, and objects on send). */
  transient: Record<string, unknown>;
}

export interface DataRuleOptions {
  /**
   * Whether objects and arrays are stored. True for track and the contacts API (explicit writes
   * of contact data); false for send, where they are template variables for that message only.
   */
  storeObjects: boolean;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

const isTransientWrapper = (v: unknown): v is { value: unknown; persistent: false } =>
  isPlainObject(v) && 'value' in v && v.persistent === false && Object.keys(v).length === 2;

const isPersistentWrapper = (v: unknown): v is { value: unknown; persistent: true } =>
  isPlainObject(v) && 'value' in v && v.persistent === true && Object.keys(v).length === 2;

/**
 * The data rules of spec §2, in one place for contacts, track and send:
 * primitives are stored; `null` deletes the key; `""` is skipped; `{value, persistent:false}`
 * is used for this request only; reserved keys are silently dropped.
 */
export function applyDataRules(input: Record<string, unknown> | undefined, opts: DataRuleOptions): DataChanges {
  const changes: DataChanges = { set: {}, unset: [], transient: {} };
  for (const [key, raw] of Object.entries(input ?? {})) {
    if (RESERVED_KEYS.has(key) || key.length === 0) continue;
    const value = isPersistentWrapper(raw) ? raw.value : raw;
    if (value === null) changes.unset.push(key);
    else if (value === '' || value === undefined) continue;
    else if (isTransientWrapper(value)) changes.transient[key] = value.value;
    else if (typeof value !== 'object' || opts.storeObjects) changes.set[key] = value;
    else changes.transient[key] = value;
  }
  return changes;
}
