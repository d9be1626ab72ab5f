/** Only same-site paths: `next` must never send a signed-in user to another site. */
export const safeNext = (next: unknown) =>
  typeof next === 'string' && next.startsWith('/') && !next.startsWith('//') && !next.includes('\\') ? next : '/app/';
