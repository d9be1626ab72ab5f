import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** An image (or not) from test/fixtures/images. */
export const imageFixture = (name: string) => readFileSync(join(import.meta.dirname, 'fixtures/images', name));

/** POSTs `bytes` as the multipart field `file` under a name and declared type of the caller's choosing. */
export async function uploadImage(
  base: string,
  auth: Record<string, string>,
  bytes: Buffer,
  opts: { name?: string; type?: string; field?: string } = {},
) {
  const form = new FormData();
  form.append(
    opts.field ?? 'file',
    new Blob([new Uint8Array(bytes)], { type: opts.type ?? 'application/octet-stream' }),
    opts.name,
  );
  const res = await fetch(`${base}/uploads/image`, { method: 'POST', headers: auth, body: form });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
