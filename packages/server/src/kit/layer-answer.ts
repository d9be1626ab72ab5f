import type { ErrorEnvelope } from '@pigeon/contract';

/** An error as Pigeon would answer it: what a compatibility layer translates into its own shape. */
export interface NativeFailure {
  status: number;
  error: ErrorEnvelope['error'];
}

/** A layer's answer to a failure: its status and body. */
export type LayerAnswer = { status: number; body: unknown };
