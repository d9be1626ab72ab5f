/** Polls until `check` holds (or the time is up) and returns the last value read. */
export async function until<T>(read: () => Promise<T> | T, check: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (check(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}
