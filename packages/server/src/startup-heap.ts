import { setFlagsFromString } from 'node:v8';

/** V8's default growth factor of the young generation (Node 20, V8 11.3). */
const DEFAULT_SEMI_SPACE_GROWTH_FACTOR = 2;

/**
 * Called by the command line before it loads anything else: V8's young generation stays at its
 * initial size (1 MB semi-spaces) while Pigeon loads its modules, migrates and starts. Start-up
 * allocates enough to grow it to its maximum (16 MB semi-spaces, ~32 MB of RSS) and V8 never gives
 * that back, so an idle process used to keep it. `releaseYoungGenerationHold()` restores the growth
 * once Pigeon has started: under load V8 grows it again as before (see docs/MEMORY.md).
 */
export function holdYoungGenerationDuringStartup(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}

export function releaseYoungGenerationHold(): void {
  setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_SEMI_SPACE_GROWTH_FACTOR}`);
}

/**
 * After each full collection V8 lets the old generation grow to a multiple of what survived (up to
 * 4× under a high allocation rate). Under the track load the API process's old space reached
 * ~100 MB for a much smaller live set, and its RSS 211–227 MB; with 50% growth the same load peaks
 * at 187–189 MB for the same throughput and CPU (bench `track-keyed`, docs/MEMORY.md). V8 reads the
 * flag whenever it sizes the heap, so it applies from here on (0: V8's own factor).
 */
export function limitOldGenerationGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
