import { STATUS_CODES } from 'node:http';
import type { PlunkContact, PlunkError } from '@pigeon/contract/compat';

export interface NativeContact {
  id: string;
  email: string;
  subscribed: boolean;
  data: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

/** Plunk keeps a contact's data as a JSON string (null when there is none) and shows it so. */
export const toPlunkContact = (c: NativeContact): PlunkContact => ({
  id: c.id,
  email: c.email,
  subscribed: c.subscribed,
  data: Object.keys(c.data).length > 0 ? JSON.stringify(c.data) : null,
  createdAt: c.createdAt,
  updatedAt: c.updatedAt,
});

/** Plunk's PUT removes a key whose new value is falsy; Pigeon removes a key set to null. */
export const toPlunkData = (data: Record<string, unknown> | undefined) =>
  data && Object.fromEntries(Object.entries(data).map(([key, value]) => [key, value || null]));

/** Plunk's error body for a status and message. */
export const plunkError = (status: number, message: string): PlunkError => ({
  code: status,
  error: STATUS_CODES[status] ?? 'Error',
  message,
  time: Date.now(),
});
