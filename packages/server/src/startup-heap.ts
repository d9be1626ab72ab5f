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
