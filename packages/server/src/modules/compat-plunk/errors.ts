import type { LayerAnswer, NativeFailure } from '../../kit/layer-answer.js';
import { plunkError } from './shapes.js';

/** Plunk's `That contact was not found`; every other message as Pigeon words it. */
export function toPlunkFailure({ status, error }: NativeFailure): LayerAnswer {
  const message =
    status === 404 && error.message === 'Contact not found' ? 'That contact was not found' : error.message;
  return { status, body: plunkError(status, message) };
}
