import { useEffect, useState } from 'react';

/**
 * `value` once it has stopped changing for `ms`: one request when typing pauses, not one per key.
 * Compared as JSON, so an object made anew on every render is not a change.
 */
export function useDebounced<T>(value: T, ms = 400): T {
  const key = JSON.stringify(value);
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(key === undefined ? (undefined as T) : (JSON.parse(key) as T)), ms);
    return () => clearTimeout(timer);
  }, [key, ms]);
  return settled;
}
